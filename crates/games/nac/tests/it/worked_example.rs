//! §2.5: the worked example recorded from the original referees, replayed through the engine.
//!
//! The four deterministic test AIs' replies go through `reply::parse_reply` (seat 3's malformed
//! `5 5 9 x` included) and then into `State`; every byte each seat would be sent is compared with
//! what the spec records.

use kakehiki_core::{Game, Score};
use kakehiki_nac::reply::parse_reply;
use kakehiki_nac::{Params, State, NUM_SEATS};
use sha2::{Digest, Sha256};

/// The replies of the four test AIs, turn by turn (§2.5 table).
const REPLIES: [[&str; 9]; NUM_SEATS] = [
    [
        "0 0 1 2 3",
        "5 5",
        "4 4 5 0 1",
        "3 3",
        "1 2 3 4 5",
        "0 1",
        "2 2 2 0 0",
        "4 5",
        "5 5 4 4 3",
    ],
    [
        "1 1 2 3 4",
        "0 4",
        "5 5 0 1 2",
        "2 2",
        "0 0 0 2 2",
        "1 2",
        "3 3 3 1 1",
        "5 0",
        "0 0 1 1 2",
    ],
    [
        "2 2 3 4 5",
        "1 1",
        "0 0 1 2 3",
        "5 0",
        "3 3 3 4 4",
        "2 3",
        "4 4 4 5 5",
        "0 1",
        "2 2 3 3 4",
    ],
    [
        "5 5 9 x",
        "2 3",
        "1 1 2 3 4",
        "4 1",
        "5 5 5 1 1",
        "3 4",
        "0 1 2 3 4",
        "1 2",
        "4 4 5 5 0",
    ],
];

/// Play the example; returns the final state and every seat's whole stream.
fn run(params: Params, seed: u32) -> (State, [String; NUM_SEATS]) {
    let mut state = State::new(params, seed);
    let mut streams: [String; NUM_SEATS] = Default::default();
    // The same streams as the referee writes them: one message per turn.
    let mut messages: [String; NUM_SEATS] = Default::default();
    for (s, stream) in streams.iter_mut().enumerate() {
        stream.push_str(&state.settings_text());
        assert_eq!(state.view(s).turn, 1);
    }
    for t in 1..=9u32 {
        assert_eq!(state.turn(), t);
        assert!(!state.is_over());
        for (s, stream) in streams.iter_mut().enumerate() {
            stream.push_str(&state.block_text(s));
            state.write_message(s, &mut messages[s]);
        }
        let n = state.picks_needed();
        assert_eq!(n, if t % 2 == 1 { 5 } else { 2 });
        let picks: Vec<Vec<u8>> = (0..NUM_SEATS)
            .map(|s| parse_reply(REPLIES[s][t as usize - 1].as_bytes(), n, params.targets).picks)
            .collect();
        state.apply([&picks[0], &picks[1], &picks[2], &picks[3]]);
    }
    assert!(state.is_over());
    assert_eq!(
        messages, streams,
        "write_message: settings first, then one block a turn"
    );
    (state, streams)
}

const A0_TURNS_1_3: &str = "9 4 6\n3 5 4 5 4 3\n\
1 D\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0 0 0\n0 0 0 0 0 0\n\
2 N\n2 0 0 3\n1 2 0 0\n1 1 2 0\n1 1 1 0\n0 1 1 0\n0 0 1 2\n2 1 1 1 0 0\n\
3 D\n2 0 0 3\n1 2 0 0\n1 1 2 0\n1 1 1 0\n0 1 1 0\n0 0 1 2\n2 1 1 1 0 4\n1 2 1 1 1 2\n";

const A1_TURNS_1_3: &str = "9 4 6\n3 5 4 5 4 3\n\
1 D\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0 0 0\n0 0 0 0 0 0\n\
2 N\n0 2 0 3\n2 1 0 0\n1 1 2 0\n1 1 1 0\n1 0 1 0\n0 0 1 2\n0 2 1 1 1 0\n\
3 D\n0 2 0 3\n2 1 0 0\n1 1 2 0\n1 1 1 0\n1 0 1 0\n0 0 1 2\n2 2 1 1 3 0\n1 2 1 1 1 2\n";

const B0_TURNS_1_3: &str = "9 4 6\n6 3 5 3 5 6\n\
1 W\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0 0 0\n0 0 0 0 0 0\n\
2 H\n2 0 0 3\n1 2 0 0\n1 1 2 0\n1 1 1 0\n0 1 1 0\n0 0 1 2\n2 1 1 1 0 0\n\
3 W\n2 0 0 3\n1 2 0 0\n1 1 2 0\n1 1 1 0\n0 1 1 0\n0 0 1 2\n2 1 1 1 0 4\n1 2 1 1 1 2\n";

const B1_TURNS_1_3: &str = "9 4 6\n6 3 5 3 5 6\n\
1 W\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0 0 0\n0 0 0 0 0 0\n\
2 H\n0 2 0 3\n2 1 0 0\n1 1 2 0\n1 1 1 0\n1 0 1 0\n0 0 1 2\n0 2 1 1 1 0\n\
3 W\n0 2 0 3\n2 1 0 0\n1 1 2 0\n1 1 1 0\n1 0 1 0\n0 0 1 2\n2 2 1 1 3 0\n1 2 1 1 1 2\n";

/// The first 2 + 9 + 8 + 9 = 28 lines of a stream.
fn turns_1_to_3(stream: &str) -> String {
    stream.split_inclusive('\n').take(28).collect()
}

/// Lines `from..from+count` of a stream (0-based line numbers).
fn lines(stream: &str, from: usize, count: usize) -> Vec<&str> {
    stream.lines().skip(from).take(count).collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const FINAL_REAL: [[u16; NUM_SEATS]; 6] = [
    [7, 10, 6, 5],
    [5, 9, 7, 9],
    [5, 11, 7, 6],
    [7, 4, 9, 6],
    [7, 3, 7, 8],
    [10, 4, 5, 7],
];

fn assert_final_real(state: &State) {
    for (i, row) in FINAL_REAL.iter().enumerate() {
        let got: Vec<u16> = (0..NUM_SEATS).map(|s| state.real(i, s)).collect();
        assert_eq!(got, row, "final real affinity of target {i}");
    }
}

fn assert_streams(streams: &[String; NUM_SEATS], expected: [(usize, &str); NUM_SEATS]) {
    for (s, (stream, (len, hash))) in streams.iter().zip(expected).enumerate() {
        assert_eq!(stream.lines().count(), 79, "seat {s}: 79 lines");
        assert!(
            stream.is_ascii() && !stream.contains('\r'),
            "seat {s}: ASCII, LF only"
        );
        assert_eq!(stream.len(), len, "seat {s}: stream length");
        assert_eq!(
            sha256_hex(stream.as_bytes()),
            hash,
            "seat {s}: stream SHA-256"
        );
    }
}

#[test]
fn seat_3_first_reply_is_applied_as_5_5_0_0_0() {
    assert_eq!(parse_reply(b"5 5 9 x", 5, 6).picks, [5, 5, 0, 0, 0]);
}

#[test]
fn run_a_nac_seed_2014() {
    let (state, streams) = run(Params::NAC, 2014);
    assert_eq!(state.weights(), [3, 5, 4, 5, 4, 3]);
    assert_eq!(turns_1_to_3(&streams[0]), A0_TURNS_1_3);
    assert_eq!(turns_1_to_3(&streams[1]), A1_TURNS_1_3);
    // Seat 3 reads itself first, then seats 0, 1, 2 (hand check of §2.5).
    assert_eq!(lines(&streams[3], 12, 1), ["3 2 0 0"]);

    // Block 6 of seat 0: settings 2 + blocks 1..5 (9 + 8 + 9 + 8 + 9 = 43) = 45 lines before it.
    assert_eq!(
        lines(&streams[0], 45, 8),
        [
            "6 N",
            "3 6 4 3",
            "3 3 5 6",
            "2 8 3 3",
            "6 1 5 3",
            "3 3 3 3",
            "6 2 3 5",
            "3 3 2 6 3 6"
        ]
    );
    assert_eq!(lines(&streams[0], 53, 1), ["7 D"]);

    assert_final_real(&state);
    assert_eq!(
        state.scorings(),
        [(5, [0, -84, 0, 84]), (9, [-144, -60, 120, 84])]
    );
    assert_eq!(state.total24(), [-144, -144, 120, 168]);
    assert_eq!(
        state.scores(),
        [
            Score::from_integer(-6),
            Score::from_integer(-6),
            Score::from_integer(5),
            Score::from_integer(7)
        ]
    );
    let outcome = Game::outcome(&state).expect("the game is over");
    assert_eq!(outcome.winner, Some(3));
    assert_eq!(outcome.scores_exact(), ["-6", "-6", "5", "7"]);

    assert_streams(
        &streams,
        [
            (
                654,
                "72b7dfee594cfc9d08a3f7fd9ad4457a44757daf79c6a47673f0db29505f0596",
            ),
            (
                657,
                "36d55d316f2e1abca982c84bdc5758f4d334cff48322f45f324a8fd190234e49",
            ),
            (
                654,
                "2a8f92999db9554820af27f283f656d50581ce0dd55bd39d3cb0b28c0612d5a3",
            ),
            (
                654,
                "6960b8a3e8a38d45cc8fa111d9aa4c9c9cbe53b030d4d53ef3bde7bca0911feb",
            ),
        ],
    );
}

#[test]
fn run_a_scores_after_turn_5_match_the_original() {
    // Scores 0, -7/2, 0, 7/2 after turn 5, as the original reported.
    let (state, _) = run(Params::NAC, 2014);
    let after5: Vec<Score> = state.scorings()[0]
        .1
        .iter()
        .map(|&x| Score::new(x, 24))
        .collect();
    assert_eq!(
        after5,
        [
            Score::from_integer(0),
            Score::new(-7, 2),
            Score::from_integer(0),
            Score::new(7, 2)
        ]
    );
    let after9: Vec<Score> = state.scorings()[1]
        .1
        .iter()
        .map(|&x| Score::new(x, 24))
        .collect();
    assert_eq!(
        after9,
        [
            Score::from_integer(-6),
            Score::new(-5, 2),
            Score::from_integer(5),
            Score::new(7, 2)
        ]
    );
}

#[test]
fn run_b_religion_war_seed_1108() {
    let (state, streams) = run(Params::RELIGION_WAR, 1108);
    assert_eq!(state.weights(), [6, 3, 5, 3, 5, 6]);
    assert_eq!(turns_1_to_3(&streams[0]), B0_TURNS_1_3);
    assert_eq!(turns_1_to_3(&streams[1]), B1_TURNS_1_3);

    assert_final_real(&state);
    assert_eq!(state.scorings(), [(9, [-48, -36, 72, 12])]);
    assert_eq!(state.total24(), [-48, -36, 72, 12]);
    let outcome = Game::outcome(&state).expect("the game is over");
    assert_eq!(outcome.winner, Some(2));
    assert_eq!(outcome.scores_exact(), ["-2", "-3/2", "3", "1/2"]);

    assert_streams(
        &streams,
        [
            (
                654,
                "51da9d8839452c9f0dd136e97746401637d1d1fbeedee7f9ba02e0d90cc93ded",
            ),
            (
                657,
                "f90eb8e6331a2a6e67487534c2b980e51c1cea2f6e5bcdc916b6edba85565656",
            ),
            (
                654,
                "de58f6f685c8b638c19c1801e10fbc0732e15470c2f5d81992a7a3595cefbbb3",
            ),
            (
                654,
                "e777dde3cb54b551ca4634e6b32cfc209e48c231379e707efd60bfd920c14cce",
            ),
        ],
    );
}
