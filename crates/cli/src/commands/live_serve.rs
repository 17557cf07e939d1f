//! `kakehiki play --serve`: one match's live page and event stream on a local port
//! (`kakehiki_web::live`, docs/live.md), then its replay's page once it is over.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use kakehiki_core::live::{LiveInfo, LiveMatch};
use kakehiki_core::replay::ReplayLog;
use kakehiki_referee::{GameDriver, MatchSpec};
use kakehiki_web::axum::extract::Query;
use kakehiki_web::axum::response::{Html, IntoResponse, Response};
use kakehiki_web::axum::routing::get;
use kakehiki_web::axum::Router;

/// The match being served.
pub struct Served {
    /// Where the table publishes the match ([`MatchSpec::live`]).
    pub live: Arc<LiveMatch>,
    /// The page's address.
    pub url: String,
    /// The replay once the match is over.
    over: Arc<Mutex<Option<String>>>,
    server: tokio::task::JoinHandle<()>,
}

#[derive(serde::Deserialize)]
struct After {
    after: Option<usize>,
}

/// Listen on `bind` and serve the match of `spec` from before its first move, and the page of
/// each of its human seats (`spec.desks`). The operator runs every seat: each seat's stderr is
/// shown; what the game keeps secret waits for the end.
pub async fn start(
    bind: SocketAddr,
    spec: &MatchSpec,
    driver: &'static dyn GameDriver,
) -> anyhow::Result<Served> {
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .with_context(|| format!("cannot listen on {bind}"))?;
    let addr = listener.local_addr()?;
    let info = LiveInfo {
        contest: "play".into(),
        index: 0,
        game: spec.game.clone(),
        entrants: spec.seats.iter().map(ToString::to_string).collect(),
        started_unix_ms: kakehiki_referee::files::unix_ms(),
    };
    let live = LiveMatch::new(info, driver.public_live());
    let over: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let seats = spec.seats.len();
    let (l1, o1, l2, o2) = (live.clone(), over.clone(), live.clone(), over.clone());
    let router = Router::new()
        .route(
            "/",
            get(move || {
                let (live, over) = (l1.clone(), o1.clone());
                async move { page(&live, &over) }
            }),
        )
        .route(
            "/events",
            get(
                move |Query(q): Query<After>, headers: kakehiki_web::axum::http::HeaderMap| {
                    let (live, over) = (l2.clone(), o2.clone());
                    let from = kakehiki_web::live::resume_of(&headers, q.after);
                    async move {
                        let done = over.lock().unwrap_or_else(|e| e.into_inner()).clone();
                        match done {
                            Some(replay) => kakehiki_web::live::stored_events(&replay, from),
                            None => kakehiki_web::live::live_events(&live, vec![true; seats], from),
                        }
                    }
                },
            ),
        )
        .route("/assets/:name", get(kakehiki_web::asset))
        .merge(kakehiki_web::human::routes(
            spec.desks.values().cloned().collect(),
            "/",
        ));
    let server = tokio::spawn(async move {
        if let Err(e) = kakehiki_web::axum::serve(listener, router).await {
            eprintln!("serving the match failed: {e}");
        }
    });
    let url = format!("http://{addr}/");
    eprintln!("watch the match at {url}");
    for desk in spec.desks.values() {
        eprintln!(
            "human seat {}: {url}seat/{}?key={}",
            desk.seat, desk.seat, desk.key
        );
    }
    Ok(Served {
        live,
        url,
        over,
        server,
    })
}

/// The match's page: live while it is played, its replay's once it is over.
fn page(live: &Arc<LiveMatch>, over: &Mutex<Option<String>>) -> Response {
    let done = over.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let title = format!("{} match", live.info.game);
    Html(kakehiki_web::live::match_page(
        live,
        done.as_deref(),
        &title,
        "kakehiki play --serve",
        "/events",
    ))
    .into_response()
}

impl Served {
    /// The match is over with `replay`: the stream sends what it held back and ends, and the
    /// page becomes the replay's.
    pub fn over(&self, replay: &ReplayLog) {
        self.live.finish(replay.lines());
        *self.over.lock().unwrap_or_else(|e| e.into_inner()) = Some(replay.to_text());
        self.live.close();
    }

    /// Serve until the process is stopped.
    pub async fn wait(self) {
        let _ = self.server.await;
    }
}
