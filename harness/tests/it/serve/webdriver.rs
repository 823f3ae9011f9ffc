//! A small WebDriver client for Debian's `chromedriver` driving headless Chromium: the dozen
//! W3C endpoints the browser test needs, on a blocking HTTP client, so that the test adds no
//! browser-automation crate (and downloads no browser).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};

/// Where Debian puts the browser and its driver.
pub(crate) const CHROMIUM: &str = "/usr/bin/chromium";
/// See [`CHROMIUM`].
pub(crate) const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The key WebDriver names an element reference with.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Reads chromedriver's output until it says its port; or what it said before it ended.
fn port_of(
    driver: &mut Child,
    errors: &Path,
) -> Result<(BufReader<std::process::ChildStdout>, String), String> {
    let Some(stdout) = driver.stdout.take() else {
        return Err("no standard output".into());
    };
    let mut out = BufReader::new(stdout);
    let mut line = String::new();
    let mut said = String::new();
    loop {
        line.clear();
        if out.read_line(&mut line).unwrap_or(0) == 0 {
            let errors = std::fs::read_to_string(errors).unwrap_or_default();
            return Err(format!("it ended; stdout: {said:?}; stderr: {errors:?}"));
        }
        said.push_str(&line);
        if let Some(rest) = line.split("successfully on port ").nth(1) {
            return Ok((out, rest.trim().trim_end_matches('.').to_string()));
        }
    }
}

/// A browser session.
pub(crate) struct Browser {
    driver: Child,
    url: String,
    client: reqwest::blocking::Client,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver on a free port and a headless session of `width`×`height`.
    pub fn start(width: u32, height: u32) -> Browser {
        // chromedriver has been seen to exit at start under load (once in many runs); it is
        // started again, and its own words are shown if it never comes up.
        let mut failures = Vec::new();
        let (driver, mut out, port) = loop {
            let log = tempfile::NamedTempFile::new().unwrap();
            let mut driver = Command::new(CHROMEDRIVER)
                .arg("--port=0")
                .stdout(Stdio::piped())
                .stderr(log.reopen().unwrap())
                .spawn()
                .unwrap();
            match port_of(&mut driver, log.path()) {
                Ok((out, port)) => break (driver, out, port),
                Err(why) => {
                    let _ = driver.kill();
                    let _ = driver.wait();
                    failures.push(why);
                    assert!(
                        failures.len() < 3,
                        "chromedriver did not start: {}",
                        failures.join(" | ")
                    );
                }
            }
        };
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        let profile = tempfile::tempdir().unwrap();
        let client = reqwest::blocking::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(120))
            .build()
            .unwrap();
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                    "--no-proxy-server", format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(30);
        let session = loop {
            let reply = client
                .post(format!("{base}/session"))
                .json(&capabilities)
                .send();
            if let Ok(reply) = reply {
                let value: Value = reply.json().unwrap();
                match value["value"]["sessionId"].as_str() {
                    Some(id) => break id.to_string(),
                    None => panic!("no session: {value}"),
                }
            }
            assert!(Instant::now() < deadline, "chromedriver never answered");
            std::thread::sleep(Duration::from_millis(100));
        };
        Browser {
            driver,
            url: format!("{base}/session/{session}"),
            client,
            _profile: profile,
        }
    }

    fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self.client.request(method, format!("{}{path}", self.url));
        request = request.json(&body.unwrap_or_else(|| json!({})));
        let reply: Value = request.send().unwrap().json().unwrap();
        if let Some(error) = reply["value"]["error"].as_str() {
            panic!("webdriver {path}: {error}: {}", reply["value"]["message"]);
        }
        reply["value"].clone()
    }

    /// Opens `url`.
    pub fn goto(&self, url: &str) {
        self.call(reqwest::Method::POST, "/url", Some(json!({"url": url})));
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page.
    pub fn script(&self, script: &str, args: Value) -> Value {
        self.call(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
    }

    /// The element `css` selects (the first one).
    fn element(&self, css: &str) -> String {
        let found = self.call(
            reqwest::Method::POST,
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("{css}: {found}"))
            .to_string()
    }

    /// Clicks the element `css` selects, as a user does (scrolled to the window's middle first:
    /// the page's sticky top bar would take a click on an element scrolled to its top).
    pub fn click(&self, css: &str) {
        let id = self.element(css);
        self.script(
            "arguments[0].scrollIntoView({block: 'center'});",
            json!([{ ELEMENT: id }]),
        );
        self.call(reqwest::Method::POST, &format!("/element/{id}/click"), None);
    }

    /// Types `text` into the element `css` selects, after clearing it.
    pub fn type_into(&self, css: &str, text: &str) {
        let id = self.element(css);
        self.call(reqwest::Method::POST, &format!("/element/{id}/clear"), None);
        self.call(
            reqwest::Method::POST,
            &format!("/element/{id}/value"),
            Some(json!({"text": text})),
        );
    }

    /// Chooses the option whose value is `value` in the select `css`, by clicking it.
    pub fn choose(&self, css: &str, value: &str) {
        self.click(&format!("{css} option[value=\"{value}\"]"));
    }

    /// The rendered text of the element `css` selects.
    pub fn text(&self, css: &str) -> String {
        let id = self.element(css);
        self.call(reqwest::Method::GET, &format!("/element/{id}/text"), None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Whether some element matches `css` and is displayed.
    pub fn shows(&self, css: &str) -> bool {
        self.script(
            "const e = document.querySelector(arguments[0]); return !!e && e.offsetParent !== null && !e.closest('[hidden]');",
            json!([css]),
        )
        .as_bool()
        .unwrap_or(false)
    }

    /// Waits until `ready` holds, failing after `seconds` with `what`.
    pub fn wait(&self, what: &str, seconds: u64, ready: impl Fn(&Browser) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(seconds);
        while !ready(self) {
            assert!(Instant::now() < deadline, "waited {seconds}s for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A PNG of the whole page (beyond the window), written to `path`.
    pub fn screenshot(&self, path: &Path) {
        // From the top: the page's sticky bar is drawn where the window is scrolled to.
        self.script("window.scrollTo(0, 0);", json!([]));
        let shot = self.call(
            reqwest::Method::POST,
            "/goog/cdp/execute",
            Some(
                json!({"cmd": "Page.captureScreenshot", "params": {"captureBeyondViewport": true}}),
            ),
        );
        let data = shot["data"].as_str().unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        std::fs::write(path, bytes).unwrap();
    }

    /// The browser console's severe entries since the last call (script errors, CSP refusals,
    /// failed loads).
    pub fn severe_console_entries(&self) -> Vec<String> {
        let entries = self.call(
            reqwest::Method::POST,
            "/se/log",
            Some(json!({"type": "browser"})),
        );
        entries
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["level"] == "SEVERE")
            .map(|e| e["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.client.delete(&self.url).send();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
