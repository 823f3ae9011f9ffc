//! One process per engine directory: a second process opening a directory in use gets an
//! error naming the directory and the holder, and the holder's data stays whole.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use mb_engine::{Engine, EngineOptions, Error, NamespaceOptions, NewRecord};

const DIR_VAR: &str = "MB_SINGLE_WRITER_DIR";

#[test]
#[ignore = "run by a_second_process_is_refused as a child process"]
fn single_writer_child_holder() {
    let Ok(dir) = std::env::var(DIR_VAR) else {
        return;
    };
    let engine = Engine::open(&dir, EngineOptions::default()).unwrap();
    engine
        .put("n", NewRecord::new("written by the holder"))
        .unwrap();
    println!("open");
    std::io::stdout().flush().unwrap();
    // Hold the directory until the parent closes our standard input.
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    drop(engine);
}

#[test]
fn a_second_process_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine");
    {
        let engine = Engine::open(&path, EngineOptions::default()).unwrap();
        engine
            .create_namespace("n", NamespaceOptions::default())
            .unwrap();
    }
    let mut holder = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "single_writer::single_writer_child_holder",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DIR_VAR, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|line| line.is_ok_and(|l| l.contains("open"))),
        "the holder opened the engine"
    );

    match Engine::open(&path, EngineOptions::default()) {
        Err(error @ Error::InUse { .. }) => {
            let message = error.to_string();
            assert!(
                message.contains(&path.display().to_string())
                    && message.contains(&format!("pid {}", holder.id())),
                "{message}"
            );
        }
        Err(other) => panic!("expected InUse, got {other}"),
        Ok(_) => panic!("a second process opened an engine in use"),
    }

    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    let engine = Engine::open(&path, EngineOptions::default()).unwrap();
    assert_eq!(engine.count("n").unwrap(), 1);
    assert_eq!(engine.search_text("n", "holder", 5).unwrap().len(), 1);
}
