//! The server refuses what it must: paths outside its runs directory, requests for another
//! host or from another site, calls without its token, and it keeps no job it cannot follow.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use super::{offline_launch, query, Served};

/// Sends `request` as written (no client normalizes its path); the status and the reply.
fn raw(base: &str, request: &str) -> (u16, String) {
    let address = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    let status = reply
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, reply)
}

fn get_raw(base: &str, path: &str, host: &str) -> (u16, String) {
    raw(
        base,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
    )
}

#[test]
fn no_path_outside_the_runs_directory_is_read() {
    let served = Served::start(
        |dir| {
            // A run outside the runs directory, and a link to it from inside.
            let outside = dir.join("outside/run");
            std::fs::create_dir_all(&outside).unwrap();
            std::fs::write(outside.join("run_config.json"), "{\"secret\": \"outside\"}").unwrap();
            std::fs::create_dir_all(dir.join("runs")).unwrap();
            std::os::unix::fs::symlink(dir.join("outside"), dir.join("runs/link")).unwrap();
        },
        &[],
        &[],
    );
    let id = served.launch(&offline_launch("bm25_message", 1));
    let job = served.ended(&id);
    let run = job["run_dirs"][0].as_str().unwrap().to_string();
    let host = served.base.trim_start_matches("http://").to_string();
    let (_, runs) = served.get("/api/runs");
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{runs}");
    for bad in [
        "../outside/run",
        "link/run",
        "/etc",
        "..",
        "a/../../outside/run",
        "off-policy\\results",
        ".serve",
        ".serve/jobs",
        "store",
    ] {
        let (status, reply) = served.get(&format!("/api/run?run={}", query(bad)));
        assert!(status == 400 || status == 404, "{bad}: {status} {reply}");
        assert!(!reply.to_string().contains("outside\""), "{bad}: {reply}");
    }
    let run = query(&run);
    for step in ["..", "../..", "a/b", "../../../../outside/run", "%2e%2e"] {
        let path = format!("/api/run/item?run={run}&step={}&index=0", query(step));
        let (status, _) = served.get(&path);
        assert!(status == 400 || status == 404, "{step}: {status}");
    }
    for path in [
        "/api/run?run=..%2f..%2foutside%2frun",
        "/api/run?run=%2e%2e/outside/run",
        "/assets/../Cargo.toml",
        "/assets/..%2f..%2fCargo.toml",
        "/assets/app.js/../../../Cargo.toml",
        "/api/jobs/..%2f..%2fjob",
        "/api/jobs/../../etc/passwd/events",
        "/../../../../etc/passwd",
    ] {
        let (status, reply) = get_raw(&served.base, path, &host);
        assert!(
            [400, 404].contains(&status),
            "{path}: {status} {}",
            reply.lines().next().unwrap_or_default()
        );
        assert!(
            !reply.contains("[package]") && !reply.contains("root:"),
            "{path}"
        );
    }
}

#[test]
fn requests_for_another_host_or_from_another_site_are_refused() {
    let served = Served::start(|_| {}, &[], &[]);
    let host = served.base.trim_start_matches("http://").to_string();
    assert_eq!(get_raw(&served.base, "/api/runs", &host).0, 200);
    // DNS rebinding: a page of evil.example resolving to this address.
    assert_eq!(get_raw(&served.base, "/api/runs", "evil.example").0, 403);
    assert_eq!(get_raw(&served.base, "/", "evil.example:80").0, 403);
    let body = offline_launch("bm25_message", 1).to_string();
    let post = |content_type: &str, origin: &str| {
        raw(
            &served.base,
            &format!(
                "POST /api/jobs HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\n{origin}\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            ),
        )
        .0
    };
    assert_eq!(post("text/plain", ""), 415);
    assert_eq!(post("application/x-www-form-urlencoded", ""), 415);
    assert_eq!(
        post("application/json", "Origin: http://evil.example\r\n"),
        403
    );
    let (_, jobs) = served.get("/api/jobs");
    assert_eq!(jobs, json!([]), "a refused request started a job");
    // The page's headers forbid framing and foreign scripts.
    let (_, reply) = get_raw(&served.base, "/", &host);
    let headers = reply.to_ascii_lowercase();
    assert!(headers.contains("content-security-policy: default-src 'self'"));
    assert!(headers.contains("x-frame-options: deny"));
}

#[test]
fn off_loopback_the_token_is_needed() {
    let refused = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(["serve", "--host", "0.0.0.0", "--port", "0", "--runs"])
        .arg(tempfile::tempdir().unwrap().path())
        .env_remove("MB_SERVE_TOKEN")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("needs an access token"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    const TOKEN: &str = "serve-token-81c3";
    let served = Served::start(|_| {}, &["--host", "0.0.0.0"], &[("MB_SERVE_TOKEN", TOKEN)]);
    let base = served.base.replace("0.0.0.0", "127.0.0.1");
    let host = base.trim_start_matches("http://").to_string();
    assert_eq!(get_raw(&base, "/api/runs", &host).0, 401);
    assert_eq!(get_raw(&base, "/", &host).0, 401);
    assert_eq!(get_raw(&base, "/?token=wrong", &host).0, 401);
    let (status, reply) = get_raw(&base, &format!("/?token={TOKEN}"), &host);
    assert_eq!(status, 303);
    let cookie = reply
        .lines()
        .find_map(|l| {
            l.strip_prefix("set-cookie: ")
                .or_else(|| l.strip_prefix("Set-Cookie: "))
        })
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    assert!(reply.to_ascii_lowercase().contains("httponly"));
    let with = |header: &str| {
        raw(
            &base,
            &format!(
                "GET /api/runs HTTP/1.1\r\nHost: {host}\r\n{header}\r\nConnection: close\r\n\r\n"
            ),
        )
        .0
    };
    assert_eq!(with(&format!("Cookie: {cookie}")), 200);
    assert_eq!(with(&format!("Authorization: Bearer {TOKEN}")), 200);
    assert_eq!(with("Authorization: Bearer wrong"), 401);
    assert_eq!(with("Cookie: mb_serve_token=wrong"), 401);
}

#[test]
fn a_job_whose_server_went_away_is_interrupted_and_resumable() {
    let mut gone = Command::new("true").spawn().unwrap();
    let pid = gone.id();
    gone.wait().unwrap();
    let served = Served::start(
        |dir: &Path| {
            let job = dir.join("runs/.serve/jobs/2026-01-01-00-00-00-1");
            std::fs::create_dir_all(&job).unwrap();
            let record = json!({
                "id": "2026-01-01-00-00-00-1", "state": "running", "exit_code": null,
                "started": "2026-01-01-00-00-00", "ended": null,
                "argv": ["off-policy"], "keys_given": ["EVALUATE_API_KEY"], "pid": pid,
            });
            std::fs::write(job.join("job.json"), record.to_string()).unwrap();
            let run = dir.join("runs/off-policy/results/domain/Sample/bm25_message/start_at_x");
            std::fs::create_dir_all(&run).unwrap();
            std::fs::write(
                job.join("progress.jsonl"),
                format!("{}\n", json!({"event": "run_dir", "path": std::fs::canonicalize(dir).unwrap().join("runs/off-policy/results/domain/Sample/bm25_message/start_at_x")})),
            )
            .unwrap();
        },
        &[],
        &[],
    );
    let (_, job) = served.get("/api/jobs/2026-01-01-00-00-00-1");
    assert_eq!(job["state"], "interrupted");
    assert_eq!(job["resumable"], true);
    // The key's value did not outlive the server: a resume asks for it again.
    assert_eq!(job["keys_needed"], json!(["EVALUATE_API_KEY"]));
}
