//! The web UI on a contest of 200 entrants being stored: scores as decimals with the exact value
//! on hover, paginated index, standings and match lists, head-to-head per entrant, and pages
//! that follow new results read incrementally, with standings equal to the batch computation.
//! Runs on SQLite, and on PostgreSQL when KAKEHIKI_TEST_DATABASE_URL is set.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use kakehiki_contest::{compute_standings, load_results, ContestDef, OutputFormat};
use kakehiki_core::{MatchReport, Outcome, Score};
use kakehiki_store::{NewResult, PgStore, SqliteStore, Store};
use serde_json::Value;
use tower::ServiceExt;

fn def(name: &str, entrants: usize) -> ContestDef {
    let mut toml = format!(
        "name = \"{name}\"\ngame = \"nac\"\nformat = \"random-tables\"\nseats = 4\nmin_games = 4\nseed = 3\n"
    );
    for i in 0..entrants {
        toml.push_str(&format!(
            "[[entrants]]\nname = \"bot{i:03}\"\nseat = \"builtin:random\"\n"
        ));
    }
    let lookup = |g: &str| {
        kakehiki_referee::find_game(g)
            .map(|d| d.game_type())
            .map_err(|e| e.to_string())
    };
    ContestDef::parse(&toml, "scale.toml", &lookup).unwrap()
}

/// Store matches `range` of the contest's schedule with made-up reports; match 0 has the
/// scores 15022/3, -155/2, 0 and 1.
fn store_matches(store: &mut dyn Store, def: &ContestDef, range: std::ops::Range<usize>) {
    let plan = kakehiki_contest::schedule(def, &BTreeMap::new());
    for m in &plan.matches[range] {
        let i = m.index as i64;
        let scores = if m.index == 0 {
            vec![
                Score::new(15022, 3),
                Score::new(-155, 2),
                Score::from_integer(0),
                Score::from_integer(1),
            ]
        } else {
            (0..4)
                .map(|s| Score::new((i * 7 + s * 13) % 11 - 5, 2))
                .collect()
        };
        let names: Vec<String> = m
            .entrants
            .iter()
            .map(|&e| def.entrants[e].name.clone())
            .collect();
        let seats = names.iter().map(|n| (n.clone(), vec![])).collect();
        let report = MatchReport::new("nac", "nac", m.seed, &Outcome::by_max(scores), seats);
        let report = serde_json::to_string(&report).unwrap();
        store
            .put_result(&NewResult {
                contest: &def.name,
                index: m.index,
                entrants: &names,
                report_json: &report,
                replay: "{\"event\":\"header\"}\n",
                duration_ms: 1,
                worker: "test",
            })
            .unwrap();
    }
}

/// A page, with the escaped slashes of attribute values read as a browser reads them; asked
/// again, as the page's own refresh does, while the contest is being read (503, Retry-After).
fn get(rt: &tokio::runtime::Runtime, app: &axum::Router, uri: &str) -> (StatusCode, String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (status, headers, text) = get_once(rt, app, uri);
        if status != StatusCode::SERVICE_UNAVAILABLE
            || headers.get("retry-after").is_none()
            || std::time::Instant::now() > deadline
        {
            return (status, text);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// One request: status, headers and text.
fn get_once(
    rt: &tokio::runtime::Runtime,
    app: &axum::Router,
    uri: &str,
) -> (StatusCode, axum::http::HeaderMap, String) {
    rt.block_on(async {
        let response = app
            .clone()
            .oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        (status, headers, text.replace("&#x2f;", "/"))
    })
}

fn count(page: &str, needle: &str) -> usize {
    page.matches(needle).count()
}

/// The part of `page` from `start` to the next `end`.
fn section<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let from = page
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in {page}"));
    let rest = &page[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

fn two_hundred_entrants(open: impl Fn() -> Box<dyn Store> + Send + Sync + 'static) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let d = def("big", 200);
    let mut writer = open();
    kakehiki_contest::register(writer.as_mut(), &d).unwrap();
    for extra in ["aaa", "zzz"] {
        kakehiki_contest::register(writer.as_mut(), &def(extra, 4)).unwrap();
    }
    store_matches(writer.as_mut(), &d, 0..120);
    let plan = kakehiki_contest::schedule(&d, &BTreeMap::new());
    let app = kakehiki_web::app_with_opener(std::sync::Arc::new(move || Ok(open())), 4).unwrap();

    // Scores: two decimals, the exact value on hover.
    let (status, page) = get(&rt, &app, "/contests/big");
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(
        page.contains("<span class=\"score\" title=\"15022/3\">5007.33</span>"),
        "{page}"
    );
    assert!(page.contains("title=\"-155/2\">-77.50<"), "{page}");
    assert!(!page.contains(">15022/3<"), "{page}");
    let (_, m0) = get(&rt, &app, "/contests/big/matches/0");
    assert!(m0.contains("title=\"15022/3\">5007.33<"), "{m0}");
    // ...and exact in the JSON API.
    let (_, api) = get(&rt, &app, "/api/contests/big/matches/0");
    assert!(api.contains("\"15022/3\""), "{api}");

    // Standings: 50 rows a page, with links to the next pages.
    let standings = section(&page, "id=\"standings\"", "</table>");
    assert_eq!(count(standings, "/entrants/"), 50, "{standings}");
    assert!(page.contains("standings: page 1 of 4"), "{page}");
    assert!(page.contains("href=\"/contests/big?spage=2\""), "{page}");
    let (_, last) = get(&rt, &app, "/contests/big?spage=4");
    let rows = section(&last, "id=\"standings\"", "</table>");
    assert_eq!(count(rows, "/entrants/"), 50);
    assert!(
        !rows.contains(section(standings, "/entrants/", "\"")),
        "{rows}"
    );
    let (_, small) = get(&rt, &app, "/contests/big?spage=3&sper=70");
    assert_eq!(
        count(
            section(&small, "id=\"standings\"", "</table>"),
            "/entrants/"
        ),
        60
    );
    assert!(
        small.contains("href=\"/contests/big?spage=2&amp;sper=70\""),
        "{small}"
    );
    // Matches: `per` a page.
    let (_, few) = get(&rt, &app, "/contests/big?per=7&page=2");
    let table = section(&few, "class=\"matches\"", "</table>");
    assert_eq!(count(table, "/matches/"), 7, "{table}");
    assert!(few.contains("matches: page 2 of 18 (120 in all)"), "{few}");
    for bad in [
        "/contests/big?per=0",
        "/contests/big?sper=100000",
        "/contests/big?spage=x",
        "/?per=-1",
    ] {
        let (status, body) = get(&rt, &app, bad);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }

    // The JSON match list: the same pages, read as one range of the store.
    let mut stored: Vec<u64> = plan.matches[..120].iter().map(|m| m.index).collect();
    stored.sort();
    let indices = |body: &str| -> Vec<u64> {
        let v: Value = serde_json::from_str(body).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|m| m["index"].as_u64().unwrap())
            .collect()
    };
    let (status, headers, body) = get_once(&rt, &app, "/api/contests/big/matches?page=2&per=50");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(indices(&body), stored[50..100]);
    assert_eq!(headers["x-total-count"], "120");
    let link = headers["link"].to_str().unwrap();
    assert!(
        link.contains("</api/contests/big/matches?page=3&per=50>; rel=\"next\"")
            && link.contains("</api/contests/big/matches?page=1&per=50>; rel=\"prev\""),
        "{link}"
    );
    let one: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(one[0]["report"]["seats"][0]["spec"], one[0]["entrants"][0]);
    let (_, _, body) = get_once(&rt, &app, "/api/contests/big/matches");
    assert_eq!(indices(&body), stored[..100]);
    let (_, _, body) = get_once(&rt, &app, "/api/contests/big/matches?page=2");
    assert_eq!(indices(&body), stored[100..]);
    let (status, _, body) = get_once(&rt, &app, "/api/contests/big/matches?page=9");
    assert_eq!((status, body.as_str()), (StatusCode::OK, "[]"));
    for (bad, message) in [
        (
            "per=0",
            "per \\\"0\\\" is not a whole number from 1 to 1000",
        ),
        (
            "per=1001",
            "per \\\"1001\\\" is not a whole number from 1 to 1000",
        ),
        ("page=0", "page \\\"0\\\" is not a whole number from 1"),
        ("page=x", "page \\\"x\\\" is not a whole number from 1"),
    ] {
        let (status, _, body) = get_once(&rt, &app, &format!("/api/contests/big/matches?{bad}"));
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert!(body.contains(message), "{bad}: {body}");
    }

    // Head to head: no 200 × 200 matrix; each entrant's page has its row.
    assert!(!page.contains("id=\"h2h\""));
    assert!(page.contains("id=\"h2h-per-entrant\""), "{page}");
    assert!(page.len() < 400_000, "contest page of {} bytes", page.len());
    let first = &plan.matches[0];
    let (status, ep) = get(
        &rt,
        &app,
        &format!("/contests/big/entrants/bot{:03}", first.entrants[0]),
    );
    assert_eq!(status, StatusCode::OK);
    let row = section(&ep, "id=\"h2h-row\"", "</table>");
    for &o in &first.entrants[1..] {
        assert!(row.contains(&format!(">bot{o:03}</a>")), "{row}");
    }
    assert!(row.contains("<td class=\"num\">1</td>"), "{row}");

    // The index: paginated too.
    let (_, index) = get(&rt, &app, "/?per=2");
    assert!(
        index.contains(">aaa</a>") && index.contains(">big</a>") && !index.contains(">zzz</a>"),
        "{index}"
    );
    assert!(index.contains("href=\"/?page=2&amp;per=2\""), "{index}");
    let planned = plan.matches.len();
    assert!(planned >= 200, "{planned}");
    assert!(index.contains(&format!("120 / {planned}")), "{index}");

    // New results are picked up, and the standings equal the batch computation.
    store_matches(writer.as_mut(), &d, 120..200);
    let (_, index) = get(&rt, &app, "/");
    assert!(index.contains(&format!("200 / {planned}")), "{index}");
    // Pages are served from memory at once while a refresher reads the new results.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let web: Value = loop {
        let (status, api) = get(&rt, &app, "/api/contests/big/standings");
        assert_eq!(status, StatusCode::OK);
        let web: Value = serde_json::from_str(&api).unwrap();
        if web["matches_stored"] == 200 || std::time::Instant::now() > deadline {
            break web;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let batch = compute_standings(&d, &load_results(writer.as_mut(), &d).unwrap());
    let batch: Value = serde_json::from_str(&batch.render(OutputFormat::Json)).unwrap();
    assert_eq!(web, batch);
    let (_, page) = get(&rt, &app, "/contests/big");
    assert!(
        page.contains(&format!("200 of {planned} matches stored")),
        "{page}"
    );
}

/// While the first read of a contest after a start takes longer than a request waits for it,
/// pages say so at once (503, Retry-After, a page that reloads itself) instead of waiting or
/// showing partial standings; the index does not wait; then the real data is served.
#[test]
fn a_contest_being_read_is_said_so_not_waited_for() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("slow.sqlite");
    let d = def("slow", 40);
    let mut writer = SqliteStore::open(&path).unwrap();
    kakehiki_contest::register(&mut writer, &d).unwrap();
    store_matches(&mut writer, &d, 0..20);
    // Every connection after the first (the start-up reader's, the refresher's) takes 2 s to
    // open: the first read of the contest ends 2 s after the start.
    let opened = std::sync::atomic::AtomicUsize::new(0);
    let app = kakehiki_web::app_with_opener(
        std::sync::Arc::new(move || {
            if opened.fetch_add(1, std::sync::atomic::Ordering::SeqCst) > 0 {
                std::thread::sleep(std::time::Duration::from_secs(2));
            }
            Ok(Box::new(SqliteStore::open(&path).unwrap()) as Box<dyn Store>)
        }),
        1,
    )
    .unwrap();
    let (status, headers, page) = get_once(&rt, &app, "/contests/slow");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{page}");
    assert_eq!(headers["retry-after"], "1");
    assert!(
        page.contains("<meta http-equiv=\"refresh\" content=\"1\">")
            && page.contains("its 20 stored results are read once after `kakehiki web` starts"),
        "{page}"
    );
    assert!(!page.contains("id=\"standings\""), "{page}");
    let (status, headers, api) = get_once(&rt, &app, "/api/contests/slow/standings");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{api}");
    assert_eq!(headers["retry-after"], "1");
    assert!(
        api.contains("\"error\":\"contest \\\"slow\\\" is being read"),
        "{api}"
    );
    let (status, _, index) = get_once(&rt, &app, "/");
    assert_eq!(status, StatusCode::OK);
    assert!(index.contains(">slow</a>"), "{index}");
    // Then the real standings, equal to the batch computation.
    let (status, api) = get(&rt, &app, "/api/contests/slow/standings");
    assert_eq!(status, StatusCode::OK, "{api}");
    let web: Value = serde_json::from_str(&api).unwrap();
    let batch = compute_standings(&d, &load_results(&mut writer, &d).unwrap());
    let batch: Value = serde_json::from_str(&batch.render(OutputFormat::Json)).unwrap();
    assert_eq!(web, batch);
}

#[test]
fn two_hundred_entrants_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.sqlite");
    two_hundred_entrants(move || Box::new(SqliteStore::open(&path).unwrap()));
}

#[test]
fn two_hundred_entrants_on_postgres() {
    let Some(url) = kakehiki_store::test_database_url() else {
        return;
    };
    let schema = format!("t_webscale_{}", std::process::id());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .unwrap();
    let sep = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{sep}options=-c%20search_path%3D{schema}");
    two_hundred_entrants(move || Box::new(PgStore::connect(&url).unwrap()));
}
