//! Pruning old jobs.

use super::*;

fn job(dir: &Path, id: &str, started: &str, state: JobState) -> (String, Job) {
    std::fs::create_dir_all(dir.join(id)).unwrap();
    let record = JobRecord {
        id: id.into(),
        state,
        exit_code: None,
        started: started.into(),
        ended: None,
        argv: Vec::new(),
        keys_given: Vec::new(),
        pid: 0,
    };
    let keys = BTreeMap::new();
    (id.to_string(), Job { record, keys })
}

#[test]
fn the_oldest_ended_jobs_past_the_kept_number_are_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut table: BTreeMap<String, Job> = [
        job(
            dir,
            "2026-12-01-10-00-00-9",
            "2026-12-01T10:00:00Z",
            JobState::Exited,
        ),
        job(
            dir,
            "2026-12-01-10-00-00-10",
            "2026-12-01T10:00:00Z",
            JobState::Failed,
        ),
        job(
            dir,
            "2026-12-02-10-00-00-1",
            "2026-12-02T10:00:00Z",
            JobState::Stopped,
        ),
        job(
            dir,
            "2026-11-30-10-00-00-1",
            "2026-11-30T10:00:00Z",
            JobState::Running,
        ),
    ]
    .into_iter()
    .collect();
    prune(&mut table, dir, 2);
    // The running job stays whatever its age; of the ended ones, the oldest (-9 before -10).
    let left: Vec<&str> = table.keys().map(String::as_str).collect();
    assert_eq!(
        left,
        [
            "2026-11-30-10-00-00-1",
            "2026-12-01-10-00-00-10",
            "2026-12-02-10-00-00-1"
        ]
    );
    assert!(!dir.join("2026-12-01-10-00-00-9").exists());
    assert!(dir.join("2026-12-01-10-00-00-10").exists());
    prune(&mut table, dir, 2);
    assert_eq!(table.len(), 3);
}
