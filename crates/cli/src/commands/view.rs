//! `kakehiki view`: a replay file as one self-contained HTML page (written, or served locally).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::exit;

#[derive(Args, Debug)]
pub struct ViewArgs {
    /// The replay file (JSON lines) written by `kakehiki play --replay` or `contest replays`.
    pub path: PathBuf,
    /// Where to write the page (default: the replay's path with `.html` added).
    #[arg(long, short, value_name = "PATH", conflicts_with = "serve")]
    pub out: Option<PathBuf>,
    /// Serve the page on a local port instead of writing it (Ctrl-C to stop).
    #[arg(long)]
    pub serve: bool,
    /// Address to serve on with --serve (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:0", requires = "serve")]
    pub bind: SocketAddr,
}

/// The page of a replay file: every seat's stderr included (the file is the contestant's own).
pub fn page_of(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read replay {}", path.display()))?;
    let title = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "replay".into());
    kakehiki_web::standalone_page(&text, &title)
        .with_context(|| format!("cannot show replay {}", path.display()))
}

/// Write the page next to the replay (or to `out`); returns where.
pub fn write_page(path: &Path, out: Option<&Path>) -> anyhow::Result<PathBuf> {
    let page = page_of(path)?;
    let out = out.map(Path::to_path_buf).unwrap_or_else(|| {
        let mut p = path.as_os_str().to_owned();
        p.push(".html");
        PathBuf::from(p)
    });
    // The page holds every seat's stderr: 0600, like the replay.
    kakehiki_core::private_files::write(&out, page)
        .with_context(|| format!("cannot write {}", out.display()))?;
    Ok(out)
}

pub fn run(args: ViewArgs) -> anyhow::Result<u8> {
    if !args.serve {
        let out = write_page(&args.path, args.out.as_deref())?;
        println!("{}", out.display());
        return Ok(exit::OK);
    }
    let page = page_of(&args.path)?;
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.bind)
            .await
            .with_context(|| format!("cannot listen on {}", args.bind))?;
        let addr = listener.local_addr()?;
        println!("viewer on http://{addr}/ (Ctrl-C to stop)");
        let router = axum_router(page);
        axum_serve(listener, router).await
    })?;
    Ok(exit::OK)
}

fn axum_router(page: String) -> kakehiki_web::axum::Router {
    use kakehiki_web::axum::{response::Html, routing::get, Router};
    Router::new().route("/", get(move || async move { Html(page) }))
}

async fn axum_serve(
    listener: tokio::net::TcpListener,
    router: kakehiki_web::axum::Router,
) -> anyhow::Result<()> {
    kakehiki_web::axum::serve(listener, router)
        .await
        .context("serving the viewer failed")
}
