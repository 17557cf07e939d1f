//! Matches as they are played, for the web servers (the contest pages, the ladder, `play --view
//! --serve`): the event stream of one match, the list of running matches, and the live page's
//! part. See `docs/live.md` for the stream's format.
//!
//! `GET .../matches/N/events` answers `text/event-stream`: one event per replay line, `id:` its
//! line number in the replay and `data:` the line itself (the replay's own JSON), from the first
//! line of the match (a reader that arrives late gets what it missed first), then `event: end`.
//! During the match only what the game makes public is sent ([`LiveMatch::public_reader`]); the
//! lines it keeps secret (a role, a colour, an order before adjudication) follow once the match
//! is over, before the lines after them; a header sent again (`id: 0`, the referee's facts
//! added at the end) replaces the first. Put back by `id`, the lines are the stored replay, with
//! another contestant's stderr hidden as the replay API hides it
//! ([`kakehiki_core::exchange::hide_stderr`]). A stored match streams its stored replay the same
//! way, then `end`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use kakehiki_core::live::{LiveInfo, LiveMatch, LiveNext, LiveReader};
use serde_json::{json, Value};

/// A line as `visible` may read it: another seat's stderr hidden; `None` for a line that
/// names stderr and cannot be read (dropped rather than risk a leak).
fn seen(line: &str, visible: &[bool]) -> Option<String> {
    let mut hidden = kakehiki_core::exchange::hide_stderr(line, visible);
    let kept = hidden.trim_end_matches('\n').len();
    hidden.truncate(kept);
    (!hidden.is_empty()).then_some(hidden)
}

fn line_event(id: usize, line: &str, visible: &[bool]) -> Option<Event> {
    seen(line, visible).map(|l| Event::default().id(id.to_string()).data(l))
}

fn end_event(finished: bool) -> Event {
    Event::default()
        .event("end")
        .data(json!({ "finished": finished }).to_string())
}

/// The stream of a match being played, from the public's reader (from where it resumes: after
/// the lines a page already shows, or where a reconnecting `EventSource` was), each line as
/// `visible` may read it.
pub fn live_events(live: &Arc<LiveMatch>, visible: Vec<bool>, from: Resume) -> Response {
    let reader = match from {
        Resume::After(k) => live.public_reader_after(k),
        Resume::LastId(id) => live.public_reader_resume(id),
    };
    let stream = futures_util::stream::unfold(
        (reader, visible, false),
        |(mut r, visible, done): (LiveReader, Vec<bool>, bool)| async move {
            if done {
                return None;
            }
            let (events, done) = match r.next().await {
                LiveNext::Lines(lines) => (
                    lines
                        .iter()
                        .filter_map(|(i, l)| line_event(*i, l, &visible))
                        .collect::<Vec<_>>(),
                    false,
                ),
                LiveNext::End { finished } => (vec![end_event(finished)], true),
            };
            let events = futures_util::stream::iter(events.into_iter().map(Ok::<_, Infallible>));
            Some((events, (r, visible, done)))
        },
    );
    use futures_util::StreamExt;
    sse(stream.flatten())
}

/// Where a reader's stream starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// After the first K lines a public reader is sent (`?after=K`: a page that shows them).
    After(usize),
    /// After the line numbered K (`Last-Event-ID: K`: an `EventSource` that lost its connection
    /// and reconnects).
    LastId(usize),
}

/// The reader's [`Resume`]: its `Last-Event-ID` if it sent one, else `?after=`.
pub fn resume_of(headers: &axum::http::HeaderMap, after: Option<usize>) -> Resume {
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok());
    match last {
        Some(id) => Resume::LastId(id),
        None => Resume::After(after.unwrap_or(0)),
    }
}

/// The stream of a stored match from where its reader resumes: its replay (already as its
/// reader may see it), then `end`.
pub fn stored_events(replay: &str, from: Resume) -> Response {
    let after = match from {
        Resume::After(k) => k,
        Resume::LastId(id) => id.saturating_add(1),
    };
    let mut events: Vec<Event> = replay
        .lines()
        .enumerate()
        .skip(after)
        .map(|(i, l)| Event::default().id(i.to_string()).data(l))
        .collect();
    events.push(end_event(true));
    sse(futures_util::stream::iter(
        events.into_iter().map(Ok::<_, Infallible>),
    ))
}

pub(crate) fn sse(
    stream: impl futures_util::Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Response {
    let mut r = Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response();
    // A proxy must not hold the stream back to buffer it.
    r.headers_mut().insert(
        "x-accel-buffering",
        axum::http::HeaderValue::from_static("no"),
    );
    r
}

/// One running match for a list: what it is, when it started, its page and its stream.
pub fn running_json(info: &LiveInfo, page: &str, events: &str) -> Value {
    json!({
        "index": info.index,
        "game": info.game,
        "entrants": info.entrants,
        "started_unix_ms": info.started_unix_ms,
        "page": page,
        "events": events,
    })
}

/// The replay so far as the public sees it (for the live page), and how many of the stream's
/// lines it holds (its reader starts after them).
pub fn public_so_far(live: &LiveMatch) -> (String, usize) {
    let lines = live.public_so_far();
    let mut text = String::new();
    for l in &lines {
        text.push_str(l);
        text.push('\n');
    }
    (text, lines.len())
}

/// The live page's viewer in `ctx`: the model of `so_far` (the public replay so far) opened at
/// its last step, or, for a game whose viewer needs more than is public during the match, its
/// latest lines.
pub(crate) fn viewer_so_far(ctx: &mut Value, so_far: &str, names: &[String]) {
    let model = crate::view::view_model(
        so_far,
        &crate::ViewOptions {
            names: Some(names.to_vec()),
            private: true,
        },
    );
    match model {
        Ok(mut model) => {
            model["live"] = json!(true);
            ctx["steps"] = json!(model["steps"].as_array().map(Vec::len).unwrap_or(0));
            crate::html::viewer_ctx(ctx, &model.to_string(), true);
        }
        Err(_) => {
            let last: Vec<&str> = so_far.lines().rev().take(30).collect();
            ctx["latest"] = json!(last.into_iter().rev().collect::<Vec<_>>());
            let [.., live, _] = crate::html::assets();
            ctx["viewer_assets"] = json!({ "live": live.path });
        }
    }
}

/// The page of a match being played: the game's viewer on what is public so far, following the
/// stream at `events` (an address that may carry a query of its own; `after`: the lines shown)
/// until the match is over.
pub fn live_page(info: &LiveInfo, so_far: &str, after: usize, events: &str) -> String {
    let sep = if events.contains('?') { '&' } else { '?' };
    let mut ctx = json!({
        "title": format!("{} match (live)", info.game),
        "heading": format!("{} match", info.game), "game": info.game,
        "seats": info.entrants, "events": format!("{events}{sep}after={after}"),
    });
    viewer_so_far(&mut ctx, so_far, &info.entrants);
    crate::html::render("live.html", ctx)
}

/// The page of a match a server plays and serves from memory (`kakehiki play --serve`, a
/// person's match on the ladder): live while it is played ([`live_page`], following `events`),
/// its `replay` once over, as `served_by` serves it (`crate::replay_page`).
pub fn match_page(
    live: &LiveMatch,
    replay: Option<&str>,
    title: &str,
    served_by: &str,
    events: &str,
) -> String {
    match replay {
        Some(replay) => crate::replay_page(replay, title, Some(served_by))
            .unwrap_or_else(|e| format!("this replay cannot be shown: {e}")),
        None => {
            let (so_far, shown) = public_so_far(live);
            live_page(&live.info, &so_far, shown, events)
        }
    }
}
