//! The page of a seat played by a person (`docs/human.md`): `GET /seat/N?key=K` (the page),
//! `GET /seat/N/events?key=K` (Server-Sent Events: what the seat is sent and what is awaited, as
//! [`DeskView`](kakehiki_core::human::DeskView) JSON, each event from where the last one ended)
//! and `POST /seat/N/reply?key=K` (one reply as a text body, answered in JSON: taken, or the
//! refusal and its reason). The key is checked before anything else, the body read only after
//! it. The match itself is shown beside the seat by the match's own live page (`match_page`).

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, Request};
use axum::http::StatusCode;
use axum::response::sse::Event;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use kakehiki_core::human::{Desk, Refusal, MAX_REPLY};
use serde_json::json;

/// The `key` of a seat's address.
#[derive(serde::Deserialize)]
pub struct Key {
    pub key: Option<String>,
}

impl Key {
    /// Whether this key opens `desk` (a missing key opens none).
    pub fn opens(&self, desk: &Desk) -> bool {
        desk.opens(self.key.as_deref().unwrap_or(""))
    }
}

/// The routes of the human seats `desks`, beside a match page served at `match_page`.
pub fn routes(desks: Vec<Arc<Desk>>, match_page: &str) -> Router {
    let desks = Arc::new(desks);
    let match_page = match_page.to_string();
    let (d1, d2, d3) = (desks.clone(), desks.clone(), desks);
    Router::new()
        .route(
            "/seat/:n",
            get(move |Path(n): Path<usize>, Query(k): Query<Key>| {
                let (desks, match_page) = (d1.clone(), match_page.clone());
                async move {
                    match desk_of(&desks, n, &k) {
                        Ok(desk) => Html(page(&desk, "", &match_page, true)).into_response(),
                        Err(r) => r,
                    }
                }
            }),
        )
        .route(
            "/seat/:n/events",
            get(move |Path(n): Path<usize>, Query(k): Query<Key>| {
                let desks = d2.clone();
                async move {
                    match desk_of(&desks, n, &k) {
                        Ok(desk) => events(desk),
                        Err(r) => r,
                    }
                }
            }),
        )
        .route(
            "/seat/:n/reply",
            post(
                move |Path(n): Path<usize>, Query(k): Query<Key>, req: Request| {
                    let desks = d3.clone();
                    async move {
                        match desk_of(&desks, n, &k) {
                            Ok(desk) => reply(&desk, req.into_body()).await,
                            Err(r) => r,
                        }
                    }
                },
            ),
        )
}

/// The desk of seat `n` when `key` opens it; otherwise the refusal (the same for a seat that is
/// no human seat and for a wrong key: the address tells nothing about other seats).
#[allow(clippy::result_large_err)] // a response is the error: it is answered at once
pub fn desk_of(desks: &[Arc<Desk>], n: usize, k: &Key) -> Result<Arc<Desk>, Response> {
    desks
        .iter()
        .find(|d| d.seat == n && k.opens(d))
        .cloned()
        .ok_or_else(|| {
            (
                StatusCode::NOT_FOUND,
                "no such seat: use the whole address the referee printed (human seat N: http://…/seat/N?key=…)",
            )
                .into_response()
        })
}

/// The seat's page, its routes under `at` (`""`: `/seat/N/...`), beside the match's page
/// `match_page` (`framed`: in a frame of the seat's page; otherwise a link to it, for a server
/// whose pages may not be framed).
pub fn page(desk: &Desk, at: &str, match_page: &str, framed: bool) -> String {
    let [.., human] = crate::html::assets();
    let key = &desk.key;
    crate::html::render(
        "human.html",
        json!({
            "title": format!("seat {} of a {} match", desk.seat, desk.game),
            "seat": desk.seat, "game": desk.game,
            "events": format!("{at}/seat/{}/events?key={key}", desk.seat),
            "reply": format!("{at}/seat/{}/reply?key={key}", desk.seat),
            "match_page": match_page, "framed": framed,
            "protocol": protocol_doc(&desk.game),
            "human_js": human.path,
        }),
    )
}

/// The protocol document a person reads for what to send.
fn protocol_doc(game: &str) -> &'static str {
    match game {
        "geister" => "docs/protocols/geister.md",
        "nac" => "docs/protocols/nac.md",
        "religion-war" => "docs/protocols/religion-war.md",
        "werewolf" => "docs/protocols/werewolf.md",
        "werewolf-nlp" => "docs/protocols/werewolf-nlp.md",
        "diplomacy" => "docs/protocols/diplomacy.md",
        _ => "docs/protocols/",
    }
}

/// The seat's events: everything so far, then what changes, until the seat is over. The
/// stream holds the seat's page open ([`Desk::open_page`]).
pub fn events(desk: Arc<Desk>) -> Response {
    let guard = desk.open_page();
    let changes = desk.subscribe();
    let stream = futures_util::stream::unfold(
        (desk, changes, guard, 0usize, 0usize, false, true),
        |(desk, mut changes, guard, msgs, sent, done, first)| async move {
            if done {
                return None;
            }
            if !first && changes.changed().await.is_err() {
                return None;
            }
            changes.borrow_and_update();
            let view = desk.view(msgs, sent);
            let (msgs, sent) = (
                msgs + view.messages.len(),
                view.sent_first + view.sent.len(),
            );
            let done = view.over.is_some();
            let data = serde_json::to_string(&view).unwrap_or_default();
            let event = Ok::<_, Infallible>(Event::default().data(data));
            Some((event, (desk, changes, guard, msgs, sent, done, false)))
        },
    );
    crate::live::sse(stream)
}

/// Take one reply (a text body of at most [`MAX_REPLY`] bytes). The answer is JSON:
/// `{"taken":true}`, or `{"error":REASON}` with the status of the refusal.
pub async fn reply(desk: &Desk, body: Body) -> Response {
    let refuse = |status: StatusCode, why: String| {
        (status, axum::Json(json!({ "error": why }))).into_response()
    };
    let Ok(bytes) = axum::body::to_bytes(body, MAX_REPLY + 2).await else {
        let why = format!("a reply is at most {MAX_REPLY} bytes");
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, why);
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return refuse(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the reply is not UTF-8 text".into(),
        );
    };
    match desk.send(text) {
        Ok(()) => axum::Json(json!({ "taken": true })).into_response(),
        Err(e @ (Refusal::NotAsked | Refusal::Over(_))) => {
            refuse(StatusCode::CONFLICT, e.to_string())
        }
        Err(e) => refuse(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()),
    }
}
