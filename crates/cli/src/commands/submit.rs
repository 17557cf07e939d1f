//! `kakehiki submit`: upload a bot to a ladder server (`kakehiki ladder serve`) with an API
//! token, and with `--wait` wait until it is built and checked. Exit 0 when the bot is active
//! (or, without `--wait`, accepted and building), 4 when its build or check failed or the upload
//! was refused.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;
use serde_json::Value;

use crate::exit;

#[derive(Args, Debug)]
pub struct SubmitArgs {
    /// The ladder server, `http://HOST:PORT` (plain HTTP only in this version).
    #[arg(long, value_name = "URL")]
    pub server: String,
    /// Your API token (from `kakehiki ladder invite`).
    #[arg(long, env = "KAKEHIKI_TOKEN", hide_env_values = true)]
    pub token: String,
    /// The ladder's name.
    #[arg(long)]
    pub ladder: String,
    /// The language of the upload (one of the ladder's).
    #[arg(long)]
    pub language: String,
    /// One source file, or a zip or tar.gz archive.
    pub path: PathBuf,
    /// Wait until the version is built and checked.
    #[arg(long)]
    pub wait: bool,
    /// Longest wait, in seconds.
    #[arg(long, default_value_t = 900)]
    pub wait_seconds: u64,
    /// Print one JSON object: `status`, `version`, `log`.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: SubmitArgs) -> anyhow::Result<u8> {
    let upload = std::fs::read(&args.path)
        .with_context(|| format!("cannot read {}", args.path.display()))?;
    let base = args.server.trim_end_matches('/');
    let agent = ureq::AgentBuilder::new()
        .timeout_connect(Duration::from_secs(10))
        .build();
    let auth = format!("Bearer {}", args.token);
    let url = format!("{base}/api/ladders/{}/submissions", args.ladder);
    let reply = agent
        .post(&url)
        .query("language", &args.language)
        .set("Authorization", &auth)
        .send_bytes(&upload);
    let mut v = answer(reply, &url)?;
    let bot = v["bot"]
        .as_str()
        .context("the server's answer has no bot")?
        .to_string();
    let version = v["version"]
        .as_u64()
        .context("the server's answer has no version")?;
    if args.wait {
        let url = format!(
            "{base}/api/ladders/{}/bots/{bot}/versions/{version}",
            args.ladder
        );
        let deadline = Instant::now() + Duration::from_secs(args.wait_seconds);
        while v["status"] == "building" {
            if Instant::now() >= deadline {
                bail!(
                    "version {version} is still building after {} s",
                    args.wait_seconds
                );
            }
            std::thread::sleep(Duration::from_millis(500));
            v = answer(agent.get(&url).set("Authorization", &auth).call(), &url)?;
        }
    }
    let status = v["status"].as_str().unwrap_or("").to_string();
    let log = v["log"].as_str().unwrap_or("");
    if args.json {
        println!(
            "{}",
            serde_json::json!({ "status": status, "version": version, "log": log,
                                "frozen": v["frozen"] == true })
        );
    } else {
        print!("{log}");
        if !log.is_empty() && !log.ends_with('\n') {
            println!();
        }
        println!("{bot} version {version}: {status}");
        if v["frozen"] == true && status != "refused" {
            println!(
                "the ladder is frozen: no new match is queued until its organiser reopens it; this version plays then if it is still your newest active one"
            );
        }
    }
    Ok(match status.as_str() {
        "active" | "building" => exit::OK,
        "build_failed" | "check_failed" | "refused" => exit::SEAT_ERRORS,
        other => bail!("the server answered an unknown status {other:?}"),
    })
}

/// The JSON body of a reply, or an error with the server's message.
fn answer(reply: Result<ureq::Response, ureq::Error>, url: &str) -> anyhow::Result<Value> {
    match reply {
        Ok(r) => {
            let text = r
                .into_string()
                .with_context(|| format!("{url}: cannot read the answer"))?;
            serde_json::from_str(&text).with_context(|| format!("{url}: the answer is not JSON"))
        }
        Err(ureq::Error::Status(code, r)) => {
            let body: Value = r
                .into_string()
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null);
            let message = body["error"].as_str().unwrap_or("no message");
            bail!("{url}: the server answered {code}: {message}")
        }
        Err(e) => Err(anyhow::Error::new(e)).with_context(|| format!("cannot reach {url}")),
    }
}
