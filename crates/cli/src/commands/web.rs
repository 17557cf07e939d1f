//! `kakehiki web`: serve standings and replays from a results store.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use crate::exit;

#[derive(Args, Debug)]
pub struct WebArgs {
    /// SQLite results store (the default store of `contest run`).
    #[arg(
        long,
        default_value = "kakehiki.sqlite",
        conflicts_with = "database_url"
    )]
    pub db: PathBuf,
    /// PostgreSQL results store.
    #[arg(long, env = "KAKEHIKI_DATABASE_URL")]
    pub database_url: Option<String>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
}

pub fn run(args: WebArgs) -> anyhow::Result<u8> {
    if args.database_url.is_none() && !args.db.exists() {
        anyhow::bail!(
            "no results store at {}: run `kakehiki contest run FILE --db {}` first",
            args.db.display(),
            args.db.display()
        );
    }
    let (db, url) = (args.db.clone(), args.database_url.clone());
    // Each concurrent reader gets its own connection, so page loads never queue behind one lock.
    let opener: kakehiki_web::StoreOpener =
        std::sync::Arc::new(move || kakehiki_store::open_store(&db, url.as_deref()));
    let app =
        kakehiki_web::app_with_opener(opener, 16).with_context(|| match &args.database_url {
            Some(url) => format!(
                "cannot open the results store {}",
                kakehiki_store::redact_url(url)
            ),
            None => format!("cannot open the results store {}", args.db.display()),
        })?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime
        .block_on(async {
            let listener = tokio::net::TcpListener::bind(args.bind).await?;
            // The address bound, so that `--bind 127.0.0.1:0` says which port it got.
            println!(
                "Kakehiki web UI on http://{} (Ctrl-C to stop)",
                listener.local_addr()?
            );
            kakehiki_web::serve_listener(app, listener).await
        })
        .with_context(|| format!("cannot serve on {}", args.bind))?;
    Ok(exit::OK)
}
