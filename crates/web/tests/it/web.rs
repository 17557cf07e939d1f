//! The web UI over a real SQLite store filled by a real contest run.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use kakehiki_contest::{run_local, ContestDef, RefereeArena, RunOptions};
use kakehiki_store::{SqliteStore, Store};
use serde_json::Value;
use tower::ServiceExt;

const CONTEST: &str = r#"
name = "web <demo>"
game = "nac"
format = "round-robin"
seed = 7
games = 4
[[entrants]]
name = "strong"
seat = "builtin:strong"
[[entrants]]
name = "random <b>"
seat = "builtin:random"
[[entrants]]
name = "sleepy"
seat = "cmd:python3 -c 'import sys; sys.stderr.write(\"SECRET\" + \"-STDERR\"); print(\"READY\", flush=True)'"
[[entrants]]
name = "random 2"
seat = "builtin:random"
"#;

fn store_with_contest(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("results.sqlite");
    let lookup = |g: &str| {
        kakehiki_referee::find_game(g)
            .map(|d| d.game_type())
            .map_err(|e| e.to_string())
    };
    let def = ContestDef::parse(CONTEST, "web.toml", &lookup).expect("contest parses");
    let store: Box<dyn Store> = Box::new(SqliteStore::open(&path).unwrap());
    let summary = run_local(&def, store, Arc::new(RefereeArena), &RunOptions::default())
        .expect("contest runs");
    assert!(summary_has_matches(&format!("{summary:?}")));
    path
}

fn summary_has_matches(debug: &str) -> bool {
    !debug.is_empty()
}

async fn get(app: &axum::Router, uri: &str) -> (StatusCode, String) {
    let response = app
        .clone()
        .oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(bytes.to_vec()).unwrap())
}

#[tokio::test]
async fn serves_standings_matches_and_public_replays() {
    let dir = tempfile::tempdir().unwrap();
    let path = tokio::task::spawn_blocking({
        let d = dir.path().to_path_buf();
        move || store_with_contest(&d)
    })
    .await
    .unwrap();
    let app = kakehiki_web::app(Box::new(SqliteStore::open(&path).unwrap()));

    let (status, body) = get(&app, "/api/contests").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let contests: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(contests[0]["name"], "web <demo>");
    assert_eq!(contests[0]["game"], "nac");
    let stored = contests[0]["matches_stored"].as_u64().unwrap();
    assert!(stored >= 1);

    let (status, body) = get(&app, "/api/contests/web%20%3Cdemo%3E/standings").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let standings: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(standings["rows"].as_array().unwrap().len(), 4);

    let (status, body) = get(&app, "/api/contests/web%20%3Cdemo%3E/matches").await;
    assert_eq!(status, StatusCode::OK);
    let matches: Value = serde_json::from_str(&body).unwrap();
    let index = matches[0]["index"].as_u64().unwrap();

    // The stored replay keeps the seat's stderr for its contestant...
    let raw = SqliteStore::open(&path)
        .unwrap()
        .replay("web <demo>", index)
        .unwrap()
        .unwrap();
    assert!(raw.contains("SECRET-STDERR"));
    // ...but replays are served without any seat's private stderr.
    let (status, replay) = get(
        &app,
        &format!("/api/contests/web%20%3Cdemo%3E/matches/{index}/replay"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(replay
        .lines()
        .next()
        .unwrap()
        .contains("\"event\":\"header\""));
    assert!(replay.contains("\"event\":\"result\""));
    assert!(!replay.contains("\"event\":\"stderr\""));
    assert!(!replay.contains("SECRET-STDERR"));

    // Pages escape what entrants and organisers wrote.
    let (status, page) = get(&app, "/").await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("web &lt;demo&gt;") && !page.contains("web <demo>"));
    let (status, page) = get(&app, "/contests/web%20%3Cdemo%3E").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("random &lt;b&gt;") && !page.contains("random <b>"),
        "{page}"
    );
    assert!(page.contains("Bradley-Terry"));
    let (status, page) = get(&app, &format!("/contests/web%20%3Cdemo%3E/matches/{index}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("id=\"kv-model\"") && !page.contains("SECRET-STDERR"));
    // Public pages and the API name entrants, never seat specs (command lines).
    assert!(
        !page.contains("python3"),
        "a seat spec leaked into the match page"
    );
    assert!(
        !replay.contains("python3"),
        "a seat spec leaked into the public replay"
    );
    let (status, one) = get(
        &app,
        &format!("/api/contests/web%20%3Cdemo%3E/matches/{index}"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert!(!one.contains("python3"), "{one}");
    assert!(
        !one.contains("SECRET-STDERR"),
        "a seat's stderr leaked into the match API: {one}"
    );
    let one: Value = serde_json::from_str(&one).unwrap();
    assert_eq!(one["index"], index);
    assert_eq!(one["report"]["seats"][0]["spec"], one["entrants"][0]);
    assert!(
        !page.contains("</script><script"),
        "embedded replay must not break out of its script element"
    );
    // A match the contest does not have, and a contest that does not exist.
    let (status, page) = get(&app, "/contests/web%20%3Cdemo%3E/matches/99999").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(page.contains("has no stored match 99999"), "{page}");
    let (status, page) = get(&app, "/contests/nope/matches/0").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(page.contains("no contest named"), "{page}");
}

#[tokio::test]
async fn bad_requests_get_specific_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.sqlite");
    let app = kakehiki_web::app(Box::new(SqliteStore::open(&path).unwrap()));
    let (status, body) = get(&app, "/api/contests").await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "[]"));
    let (status, body) = get(&app, "/api/contests/nope/standings").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("no contest named \\\"nope\\\""), "{body}");
    let (status, body) = get(&app, "/api/contests/nope/matches/abc/replay").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("not a whole number"), "{body}");
    let (status, _) = get(&app, "/api/contests/nope/matches/3/replay").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, page) = get(&app, "/contests/nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(page.contains("no contest named"));
    let (status, body) = get(&app, "/no/such/page").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("\"error\""), "{body}");
    // A browser asking for a page gets a page, not raw JSON.
    let response = app
        .clone()
        .oneshot(
            Request::builder()
                .uri("/no/such/page")
                .header("accept", "text/html,application/xhtml+xml")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let page = String::from_utf8(bytes.to_vec()).unwrap();
    assert!(page.starts_with("<!doctype html>"), "{page}");
    assert!(page.contains("no such page: "), "{page}");
    assert!(page.contains("name=\"viewport\""), "{page}");
    let (status, _) = get(&app, "/contests/nope?page=0").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
