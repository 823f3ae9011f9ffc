//! Moving a tenant between stores (docs/scale-out.md, "Moving a tenant"): a tenant's memories
//! and graph, written through the HTTP server of store A, exported and imported into store B,
//! are the same memory there (equal digests per namespace, equal answers through B's server),
//! another tenant's data never travels; a second import, an export of another tenant and a
//! damaged file are refused without changing anything; `drop-tenant` then leaves no byte of
//! the tenant in store A while the other tenant is untouched. A cut or altered export is
//! refused, and `--out` writes only regular files.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Output};

use crate::support::http::HttpClient;
use crate::support::{ours_http_system, structured};
use mb_core::residue::{files_holding, markers};
use mb_engine::{Engine, EngineOptions};
use serde_json::{json, Value};

fn config(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("service.toml");
    let digest = memorybench_mcp::digest_hex;
    let text = format!(
        "[[tenants]]\nname = \"acme\"\ntoken_sha256 = \"{}\"\n\n\
         [[tenants]]\nname = \"bravo\"\ntoken_sha256 = \"{}\"\n",
        digest("token-acme"),
        digest("token-bravo")
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn server(store: &Path, config: &Path) -> (Child, String) {
    ours_http_system(
        store,
        "hybrid",
        &[
            "--embedder",
            "hashing",
            "--config",
            config.to_str().unwrap(),
        ],
    )
}

fn stop(mut child: Child) {
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    assert!(
        child.wait().unwrap().success(),
        "the server did not stop cleanly"
    );
}

fn client(url: &str, token: &str) -> HttpClient {
    let mut client = HttpClient::new(url, Some(token));
    assert_eq!(client.initialize(), 200);
    client
}

/// Runs `memorybench-mcp ARGS` (a tenant command).
fn command(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memorybench-mcp"))
        .args(args)
        .output()
        .unwrap()
}

/// `memorybench-mcp export` of tenant acme from `store` to `out`.
fn export_acme(store: &str, out: &str) -> Output {
    command(&["export", "--store", store, "--tenant", "acme", "--out", out])
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Digest of every namespace of `store` whose name starts with `prefix`.
fn digests(store: &Path, prefix: &str) -> BTreeMap<String, String> {
    let engine = Engine::open(store, EngineOptions::default()).unwrap();
    let found = engine
        .namespaces()
        .into_iter()
        .filter(|ns| ns.name.starts_with(prefix))
        .map(|ns| (ns.name.clone(), engine.digest(&ns.name).unwrap()))
        .collect();
    engine.close().unwrap();
    found
}

/// What tenant `token` sees: searches of both users and the graph.
fn seen(url: &str, token: &str, query: &str) -> Value {
    let mut c = client(url, token);
    let mut answers = Vec::new();
    for user in ["ann", "ben"] {
        let found = structured(&c.call(
            "search_memories",
            json!({"user_id": user, "query": query, "limit": 10}),
        ));
        answers.push(found["results"].clone());
    }
    answers.push(structured(&c.call("read_graph", json!({}))));
    Value::Array(answers)
}

#[test]
fn a_tenant_moves_whole_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let (a, b, fresh) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let marks = markers(8, 4242);
    let (acme_marks, bravo_marks) = marks.split_at(4);

    // Store A: both tenants write memories of two users and a graph.
    let (child, url) = server(&a, &config);
    for (token, tenant, marks) in [
        ("token-acme", "acme", acme_marks),
        ("token-bravo", "bravo", bravo_marks),
    ] {
        let mut c = client(&url, token);
        for (i, mark) in marks.iter().enumerate() {
            let user = if i % 2 == 0 { "ann" } else { "ben" };
            let said = format!("{tenant} {user}: my code word is {mark} and I like sailing");
            structured(&c.call(
                "add_memory",
                json!({"user_id": user, "wait": true, "messages": [
                    {"role": "user", "content": said},
                    {"role": "assistant", "content": "Noted, sailing it is."}]}),
            ));
        }
        structured(&c.call(
            "create_entities",
            json!({"entities": [{"name": format!("{tenant} boat"), "entityType": "thing",
                                 "observations": [format!("painted {}", marks[0])]}]}),
        ));
    }
    let before = seen(&url, "token-acme", "code word sailing");
    assert!(before[0].to_string().contains(&acme_marks[0]), "{before}");
    stop(child);
    let acme_a = digests(&a, "mcp/t/acme/");
    let bravo_a = digests(&a, "mcp/t/bravo/");
    assert!(acme_a.len() >= 3, "{acme_a:?}");

    // Export acme, import it into B.
    let file = dir.path().join("acme.jsonl");
    let (a_arg, b_arg, c_arg, f_arg) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        fresh.to_str().unwrap(),
        file.to_str().unwrap(),
    );
    let exported = export_acme(a_arg, f_arg);
    assert!(exported.status.success(), "{}", stderr(&exported));
    assert!(stderr(&exported).contains("exported tenant acme"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("bravo"),
        "another tenant's data in the export"
    );
    let imported = command(&[
        "import", "--store", b_arg, "--tenant", "acme", "--in", f_arg,
    ]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    assert_eq!(digests(&b, "mcp/t/acme/"), acme_a);
    assert!(digests(&b, "mcp/t/bravo/").is_empty());

    // B's server answers acme as A's did; bravo has nothing there.
    let (child, url) = server(&b, &config);
    assert_eq!(seen(&url, "token-acme", "code word sailing"), before);
    let bravo = seen(&url, "token-bravo", "code word sailing");
    assert_eq!(bravo[0], json!([]), "{bravo}");
    // Moved memories keep working: a new one is found beside the old ones.
    let mut c = client(&url, "token-acme");
    structured(&c.call(
        "add_memory",
        json!({"user_id": "ann", "wait": true, "messages": [
            {"role": "user", "content": "after the move I bought a kayak"}]}),
    ));
    let found = structured(&c.call(
        "search_memories",
        json!({"user_id": "ann", "query": "kayak", "limit": 1}),
    ));
    assert!(found["results"][0]["text"]
        .as_str()
        .unwrap()
        .contains("kayak"));
    stop(child);
    let acme_b = digests(&b, "mcp/t/acme/");

    // Refused, nothing changed: a second import, another tenant's export, a missing store.
    let again = command(&[
        "import", "--store", b_arg, "--tenant", "acme", "--in", f_arg,
    ]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("line 1") && stderr(&again).contains("already holds"),
        "{}",
        stderr(&again)
    );
    let wrong = command(&[
        "import", "--store", b_arg, "--tenant", "bravo", "--in", f_arg,
    ]);
    assert!(!wrong.status.success());
    assert!(
        stderr(&wrong).contains("not tenant \"bravo\"'s"),
        "{}",
        stderr(&wrong)
    );
    assert_eq!(digests(&b, "mcp/t/acme/"), acme_b);
    let missing = dir.path().join("nowhere");
    let output = command(&[
        "export",
        "--store",
        missing.to_str().unwrap(),
        "--tenant",
        "acme",
    ]);
    assert!(!output.status.success());
    assert!(!missing.exists());

    // A damaged line in the middle: the import stops there, naming it, and keeps nothing.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let damaged_at = lines.len() * 2 / 3;
    let half = lines[damaged_at].len() / 2;
    lines[damaged_at].truncate(half);
    let damaged = dir.path().join("damaged.jsonl");
    std::fs::write(&damaged, lines.join("\n")).unwrap();
    let output = command(&[
        "import",
        "--store",
        c_arg,
        "--tenant",
        "acme",
        "--in",
        damaged.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains(&format!("line {}", damaged_at + 1)),
        "{}",
        stderr(&output)
    );
    assert!(digests(&fresh, "mcp/t/").is_empty());

    // drop-tenant: no byte of acme left in A, bravo as it was.
    let holding = |marks: &[String]| -> Vec<_> {
        marks
            .iter()
            .flat_map(|mark| files_holding(&a, mark).unwrap())
            .collect()
    };
    assert!(
        !holding(acme_marks).is_empty(),
        "the markers are not found even before"
    );
    let dropped = command(&["drop-tenant", "--store", a_arg, "--tenant", "acme"]);
    assert!(dropped.status.success(), "{}", stderr(&dropped));
    assert!(digests(&a, "mcp/t/acme/").is_empty());
    assert_eq!(digests(&a, "mcp/t/bravo/"), bravo_a);
    let left = holding(acme_marks);
    assert!(left.is_empty(), "acme's markers are still in {left:?}");
    assert!(!holding(bravo_marks).is_empty());
}

/// An export ends with its end record, whose digest `export` and `import` both print; a file
/// cut at a line boundary, altered, or with lines after its end is refused and leaves nothing;
/// `--out` writes only regular files (a symbolic link, a directory or a pipe is refused and
/// left as it was) and `-` is standard output.
#[test]
fn a_cut_or_altered_export_is_refused_and_only_regular_files_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let (child, url) = server(&a, &config);
    let mut c = client(&url, "token-acme");
    for user in ["ann", "ben"] {
        structured(&c.call(
            "add_memory",
            json!({"user_id": user, "wait": true, "messages": [
                {"role": "user", "content": format!("{user} keeps bees and sails on sundays")},
                {"role": "assistant", "content": "Noted."}]}),
        ));
    }
    stop(child);
    let (a_arg, b_arg) = (a.to_str().unwrap(), b.to_str().unwrap());
    let file = dir.path().join("acme.jsonl");
    let exported = export_acme(a_arg, file.to_str().unwrap());
    assert!(exported.status.success(), "{}", stderr(&exported));
    let sha = |output: &Output| -> String {
        let text = stderr(output);
        let at = text
            .find("sha256 ")
            .unwrap_or_else(|| panic!("no digest in {text}"));
        text[at + 7..at + 7 + 64].to_string()
    };
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines.last().unwrap().starts_with("{\"end\":"),
        "{}",
        lines.last().unwrap()
    );
    assert!(lines.len() > 6, "{} lines", lines.len());

    // Standard output holds the same export.
    let to_stdout = export_acme(a_arg, "-");
    assert!(to_stdout.status.success(), "{}", stderr(&to_stdout));
    assert_eq!(String::from_utf8_lossy(&to_stdout.stdout), text);

    let import = |name: &str, content: String| -> Output {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        command(&[
            "import",
            "--store",
            b_arg,
            "--tenant",
            "acme",
            "--in",
            path.to_str().unwrap(),
        ])
    };
    let refused = |output: &Output, why: &str| {
        assert!(!output.status.success(), "accepted");
        assert!(stderr(output).contains(why), "{}", stderr(output));
        assert!(digests(&b, "mcp/t/").is_empty(), "something was kept");
    };
    // Cut at a line boundary: whole namespaces or half of one, the end record lost.
    for keep in [lines.len() - 1, lines.len() / 2, 1] {
        let cut: String = lines[..keep].iter().map(|l| format!("{l}\n")).collect();
        refused(&import("cut.jsonl", cut), "ends before its end record");
    }
    // A line changed in place, still valid: the digest no longer matches.
    let altered = text.replacen("sails on sundays", "sails on mondays", 1);
    assert_ne!(altered, text);
    refused(&import("altered.jsonl", altered), "the file was altered");
    // Lines after the end record.
    refused(
        &import("trailing.jsonl", format!("{text}{}\n", lines[1])),
        "nothing may follow",
    );

    // A namespace renamed with `..` inside the tenant's prefix, the end record recomputed to
    // match: refused all the same (it would be stored where no server reaches it).
    let renamed = text
        .lines()
        .filter(|l| !l.starts_with("{\"end\":"))
        .map(|l| {
            let l = l.replacen("\"name\":\"mcp/t/acme/", "\"name\":\"mcp/t/acme/../", 1);
            format!("{l}\n")
        })
        .collect::<String>();
    let mut end: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    for ns in end["end"]["namespaces"].as_array_mut().unwrap() {
        let name = ns["name"]
            .as_str()
            .unwrap()
            .replacen("mcp/t/acme/", "mcp/t/acme/../", 1);
        ns["name"] = json!(name);
    }
    use sha2::Digest;
    let digest: String = sha2::Sha256::digest(renamed.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    end["end"]["sha256"] = json!(digest);
    refused(
        &import("dotdot.jsonl", format!("{renamed}{end}\n")),
        "`..` part",
    );

    // The whole file goes in, with the digest the export printed.
    let imported = import("whole.jsonl", text.clone());
    assert!(imported.status.success(), "{}", stderr(&imported));
    assert_eq!(sha(&imported), sha(&exported));
    assert_eq!(digests(&b, "mcp/t/acme/"), digests(&a, "mcp/t/acme/"));

    // Only regular files are written: a link, a directory and a pipe are refused, untouched.
    let target = dir.path().join("target.txt");
    std::fs::write(&target, "keep me").unwrap();
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let folder = dir.path().join("folder.jsonl");
    std::fs::create_dir(&folder).unwrap();
    let pipe = dir.path().join("pipe.jsonl");
    assert!(Command::new("mkfifo")
        .arg(&pipe)
        .status()
        .unwrap()
        .success());
    for (path, kind) in [
        (&link, "a symbolic link"),
        (&folder, "a directory"),
        (&pipe, "a device, pipe or socket"),
    ] {
        let out = export_acme(a_arg, path.to_str().unwrap());
        assert!(!out.status.success(), "{} accepted", path.display());
        assert!(stderr(&out).contains(kind), "{}", stderr(&out));
    }
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    assert!(folder.is_dir());
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&pipe).unwrap().file_type().is_fifo());
}
