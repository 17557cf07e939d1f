//! The browser tests' helpers: chromedriver with headless chromium (WebDriver, through
//! fantoccini), and reading and clicking a page's elements by id.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{start_and_read, Says, Server};

pub fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Click the element with id `id` on the browser's page.
pub async fn click(c: &fantoccini::Client, id: &str) {
    use fantoccini::Locator;
    c.find(Locator::Id(id))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// The text of the element with id `id`, once the page has one.
pub async fn shown(c: &fantoccini::Client, id: &str) -> String {
    use fantoccini::Locator;
    c.wait()
        .for_element(Locator::Id(id))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// Type `text` into the element with id `id` (a field, or a file input's path).
pub async fn type_into(c: &fantoccini::Client, id: &str, text: &str) {
    use fantoccini::Locator;
    c.find(Locator::Id(id))
        .await
        .unwrap()
        .send_keys(text)
        .await
        .unwrap();
}

/// The text of the element with id `id` once `done` holds for it, looked at every `every_ms`
/// milliseconds (a page that reloads itself, or one a form post replaces: a missing or stale
/// element reads as empty); after `within_s` seconds, the last text read as the error.
pub async fn text_when(
    c: &fantoccini::Client,
    id: &str,
    done: impl Fn(&str) -> bool,
    within_s: u64,
    every_ms: u64,
) -> Result<String, String> {
    use fantoccini::Locator;
    let started = Instant::now();
    loop {
        let text = match c.find(Locator::Id(id)).await {
            Ok(e) => e.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        if done(&text) {
            return Ok(text);
        }
        if started.elapsed() >= Duration::from_secs(within_s) {
            return Err(text);
        }
        tokio::time::sleep(Duration::from_millis(every_ms)).await;
    }
}

/// chromedriver on a port of its own with headless chromium: `None` (the test skipped) where
/// they are not installed, which CI refuses.
pub struct WebDriver {
    _driver: Server,
    port: u16,
    chromium: PathBuf,
    profile: tempfile::TempDir,
}

impl WebDriver {
    pub fn start() -> Option<WebDriver> {
        let chromium = std::env::var_os("KAKEHIKI_CHROMIUM")
            .map(PathBuf::from)
            .or_else(|| on_path("chromium"));
        let (Some(chromium), Some(driver)) = (chromium, on_path("chromedriver")) else {
            assert!(
                std::env::var_os("KAKEHIKI_CI").is_none(),
                "chromium and chromedriver are needed in CI (Debian's chromium and chromium-driver)"
            );
            eprintln!(
                "skipped: no chromium or chromedriver on PATH (Debian's chromium, chromium-driver)"
            );
            return None;
        };
        let mut cmd = Command::new(driver);
        cmd.arg("--port=0").stderr(std::process::Stdio::null());
        let (_driver, port) = start_and_read(cmd, Says::Stdout, |line| {
            line.strip_prefix("ChromeDriver was started successfully on port ")?
                .trim_end_matches('.')
                .parse::<u16>()
                .ok()
        });
        Some(WebDriver {
            _driver,
            port,
            chromium,
            profile: tempfile::tempdir().unwrap(),
        })
    }

    /// A browser session (1100×900).
    pub async fn session(&self) -> fantoccini::Client {
        let caps: serde_json::Map<String, Value> = serde_json::from_value(serde_json::json!({
            "goog:chromeOptions": {
                "binary": self.chromium,
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1100,900",
                         format!("--user-data-dir={}", self.profile.path().display())],
            }
        }))
        .unwrap();
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        fantoccini::ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a WebDriver session")
    }
}
