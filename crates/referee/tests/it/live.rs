//! A match read as it is played ([`kakehiki_referee::live`]): in every game the lines a reader
//! gets, put back in place by their line numbers, are the stored replay, and most of them
//! arrive before the match is over.

use std::collections::BTreeMap;
use std::sync::Arc;

use kakehiki_core::SeatSpec;
use kakehiki_referee::live::{registry, LiveMatch, LiveNext};
use kakehiki_referee::{find_game, MatchSpec};

/// What a reader got: every `(line number, line)`, whether the match finished, and how many
/// lines it had before the batch that brought the seats' ends (written once the match is over).
struct Read {
    lines: Vec<(usize, String)>,
    finished: bool,
    before_the_end: usize,
}

async fn read_all(live: Arc<LiveMatch>) -> Read {
    let mut r = live.reader();
    let mut lines = Vec::new();
    let mut before_the_end = None;
    loop {
        match r.next().await {
            LiveNext::Lines(batch) => {
                if before_the_end.is_none() && batch.iter().any(|(_, l)| l.contains("\"seat_end\""))
                {
                    before_the_end = Some(lines.len());
                }
                lines.extend(batch.into_iter().map(|(i, l)| (i, l.to_string())))
            }
            LiveNext::End { finished } => {
                return Read {
                    before_the_end: before_the_end.unwrap_or(lines.len()),
                    lines,
                    finished,
                }
            }
        }
    }
}

/// The lines a public reader gets now, without waiting for more.
async fn drain(r: &mut kakehiki_referee::live::LiveReader) -> Vec<(usize, String)> {
    let mut got = Vec::new();
    while let Ok(LiveNext::Lines(batch)) =
        tokio::time::timeout(std::time::Duration::from_millis(50), r.next()).await
    {
        got.extend(batch.into_iter().map(|(i, l)| (i, l.to_string())));
    }
    got
}

/// What each game keeps from the public until the match is over, as substrings of its lines.
fn secrets(game: &str) -> &'static [&'static str] {
    match game {
        "geister" => &["\"event\":\"set\"", "\"kind\":\"SET?\""],
        "nac" | "religion-war" => &["\"event\":\"turn\"", "\"event\":\"seat\""],
        "werewolf" => &[
            ",status,",
            ",whisper,",
            ",divine,",
            "\"kind\":\"ROLE\"",
            "\"kind\":\"WHISPER\"",
            "\"kind\":\"DIVINE\"",
            "\"kind\":\"ATTACK\"",
        ],
        "werewolf-nlp" => &[
            "\"kind\":\"DIVINE\"",
            "\"kind\":\"ATTACK\"",
            "\"kind\":\"GUARD\"",
            "\"kind\":\"WHISPER\"",
        ],
        "diplomacy" => &["\"kind\":\"orders\""],
        _ => &[],
    }
}

/// Play `game` with a reader of its live stream and a public one; the stream, put back in
/// place, is the stored replay; the public reader gets none of the game's secrets until the
/// match is over, and then all of them. Returns what the first reader got.
async fn streamed_equals_stored(game: &str, seats: Vec<SeatSpec>, contest: &str) -> Read {
    let mut spec = MatchSpec::new(game, 7, seats);
    let names: Vec<String> = (0..spec.seats.len()).map(|i| format!("e{i}")).collect();
    let live = registry().start(
        contest,
        1,
        game,
        &names,
        find_game(game).unwrap().public_live(),
    );
    spec.live = Some(live.clone());
    let reader = tokio::spawn(read_all(live.clone()));
    let mut public = live.public_reader();
    let mut record = find_game(game).unwrap().play(&spec).await.unwrap();
    let during = drain(&mut public).await;
    for (_, l) in &during {
        for secret in secrets(game) {
            assert!(
                !l.contains(secret),
                "{game}: a secret went out during the match: {l}"
            );
        }
    }
    assert!(
        during.len() > 1,
        "{game}: the public saw nothing but the header"
    );
    record.stamp_sandbox(&spec);
    live.finish(record.replay.lines());
    registry().end(contest, 1);
    let after = drain(&mut public).await;
    assert!(
        after
            .iter()
            .any(|(_, l)| secrets(game).iter().any(|s| l.contains(s))),
        "{game}: the secrets come at the end"
    );
    let mut public_lines = BTreeMap::new();
    for (i, l) in during.into_iter().chain(after) {
        public_lines.insert(i, l);
    }
    assert_eq!(
        public_lines.into_values().collect::<Vec<_>>(),
        record.replay.lines(),
        "{game}: the public stream, once over, is the replay"
    );
    let read = reader.await.unwrap();
    assert!(read.finished);
    let mut by_line = BTreeMap::new();
    for (i, l) in &read.lines {
        by_line.insert(*i, l.clone());
    }
    let streamed: Vec<String> = by_line.into_values().collect();
    assert_eq!(streamed, record.replay.lines(), "{game}");
    read
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_game_streams_its_stored_replay() {
    let b = |n: &str| SeatSpec::Builtin(n.into());
    streamed_equals_stored(
        "nac",
        vec![b("random"), b("strong"), b("random"), b("random")],
        "live-nac",
    )
    .await;
    streamed_equals_stored("religion-war", vec![b("random"); 4], "live-rw").await;
    streamed_equals_stored("geister", vec![b("random"), b("strong")], "live-geister").await;
    streamed_equals_stored("werewolf", vec![b("sample"); 5], "live-ww").await;
    streamed_equals_stored("werewolf-nlp", vec![b("sample"); 5], "live-nlp").await;
    streamed_equals_stored("diplomacy", vec![b("random"); 7], "live-dip").await;
}

/// A process bot's exchanges carry its stderr, request by request: each is published once the
/// bot is asked again (its stderr complete), and the stream still equals the stored replay.
/// The match is followed as it goes: most lines arrive before the match is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_bots_exchanges_are_published_with_their_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("talkative.py");
    std::fs::write(
        &bot,
        "import sys\nfor line in sys.stdin:\n    if line.startswith('SET?'):\n        print('SET:ABCD', flush=True)\n    elif line.startswith('MOV?'):\n        print('thinking about', line[:8], file=sys.stderr, flush=True)\n        b = line[4:]\n        for i in range(8):\n            x, y = int(b[3*i]), int(b[3*i+1])\n            if y < 9 and y > 0 and not any(b[3*j:3*j+2] == f'{x}{y-1}' for j in range(8)):\n                print(f'MOV:{chr(65+i)},N', flush=True)\n                break\n        else:\n            print('MOV:A,N', flush=True)\n",
    )
    .unwrap();
    let seat = SeatSpec::Cmd(vec!["python3".into(), bot.display().to_string()]);
    let read = streamed_equals_stored(
        "geister",
        vec![seat, SeatSpec::Builtin("random".into())],
        "live-stderr",
    )
    .await;
    assert!(
        read.before_the_end * 10 >= read.lines.len() * 8,
        "only {} of {} lines before the end",
        read.before_the_end,
        read.lines.len()
    );
    assert!(
        read.lines
            .iter()
            .any(|(_, l)| l.contains("thinking about MOV?")),
        "the bot's stderr is in its exchanges"
    );
}
