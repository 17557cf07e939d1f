//! Replay verification: a replay re-run from its seed and recorded replies must reproduce it
//! byte for byte ([`verify_replay`]); an older format of a game is converted by its driver and
//! verified ([`upgrade_replay`]). Apart from the driver contract ([`crate::driver`]), which it
//! uses.

use kakehiki_core::replay::ReplayLog;

use crate::driver::{GameDriver, MatchRecord, RefereeError, SANDBOX_KEY};

/// The name and version of a replay format: `kakehiki/nac-replay@2` is (`kakehiki/nac-replay`, 2);
/// Geister's `kakehiki-geister/2` (the version after the last `/`) is (`kakehiki-geister`, 2).
pub fn format_version(format: &str) -> Option<(&str, u32)> {
    let (name, v) = format.rsplit_once(['@', '/'])?;
    Some((name, v.parse().ok()?))
}

/// Whether a replay of format `found` can be re-run by a driver that writes `current`: the same
/// format, or an error that says what to do (an older version: upgrade it; a newer one or
/// another name: this build cannot read it).
pub fn check_format(found: &str, current: &str) -> Result<(), RefereeError> {
    if found == current {
        return Ok(());
    }
    match (format_version(found), format_version(current)) {
        (Some((a, v)), Some((b, w))) if a == b && v < w => Err(RefereeError::OldReplayFormat {
            found: found.to_string(),
            current: current.to_string(),
        }),
        (Some((a, v)), Some((b, w))) if a == b && v > w => Err(RefereeError::BadReplay(format!(
            "replay format {found} is newer than this kakehiki's {current}: re-run it with the kakehiki that wrote it"
        ))),
        _ => Err(RefereeError::BadReplay(format!(
            "unknown replay format {found:?}: this kakehiki writes {current:?} for this game"
        ))),
    }
}

/// Re-run `text` and check the re-run reproduces it byte for byte.
pub fn verify_replay(text: &str) -> Result<MatchRecord, RefereeError> {
    let game = ReplayLog::parse(text)?.header.game;
    verify_with(crate::registry::find_game(&game)?, text)
}

/// A replay converted by [`upgrade_replay`]: its text, the formats, and the re-run that
/// verified it.
#[derive(Debug)]
pub struct Upgraded {
    pub text: String,
    pub from: String,
    pub to: String,
    pub record: MatchRecord,
}

/// Convert a replay of an older format of its game into the current one with the game's
/// [`GameDriver::upgrade`], and verify the result (`kakehiki replay --upgrade`). A replay that
/// is already current is refused as such. The sandbox header field is kept.
pub fn upgrade_replay(text: &str) -> Result<Upgraded, RefereeError> {
    let game = ReplayLog::parse(text)?.header.game;
    upgrade_with(crate::registry::find_game(&game)?, text)
}

fn upgrade_with(driver: &dyn GameDriver, text: &str) -> Result<Upgraded, RefereeError> {
    let parsed = ReplayLog::parse(text)?;
    let from = parsed.header.format.clone();
    let current = driver.replay_format();
    if current == Some(from.as_str()) || (current.is_none() && verify_with(driver, text).is_ok()) {
        return Err(RefereeError::AlreadyCurrent(from));
    }
    let mut log = driver.upgrade(&parsed)?;
    let sandbox = text
        .lines()
        .next()
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .and_then(|h| h.get(SANDBOX_KEY).cloned());
    if let Some(s) = sandbox {
        log.append_header_field(SANDBOX_KEY, &s);
    }
    let text = log.to_text();
    let record = verify_with(driver, &text).map_err(|e| {
        RefereeError::BadReplay(format!(
            "the upgrade from {from} does not verify, nothing was written: {e}"
        ))
    })?;
    let to = ReplayLog::parse(&text)?.header.format;
    Ok(Upgraded {
        text,
        from,
        to,
        record,
    })
}

fn verify_with(driver: &dyn GameDriver, text: &str) -> Result<MatchRecord, RefereeError> {
    // What the referee recorded about the bots' sandbox is not part of the game.
    let text = &*kakehiki_core::replay::strip_header_field(text, SANDBOX_KEY);
    let parsed = ReplayLog::parse(text)?;
    if let Some(current) = driver.replay_format() {
        check_format(&parsed.header.format, current)?;
    }
    let record = driver.rerun(&parsed)?;
    // A driver that does not declare its format: the re-run's header says it.
    if let Some(Ok(h)) = record
        .replay
        .lines()
        .first()
        .map(|l| serde_json::from_str::<kakehiki_core::replay::ReplayHeader>(l))
    {
        check_format(&parsed.header.format, &h.format)?;
    }
    let rerun = record.replay.to_text();
    if rerun != text {
        let recorded_lines: Vec<&str> = text.lines().collect();
        let rerun_lines: Vec<&str> = rerun.lines().collect();
        let n = recorded_lines.len().max(rerun_lines.len());
        for i in 0..n {
            let a = recorded_lines.get(i).copied().unwrap_or("<end of replay>");
            let b = rerun_lines.get(i).copied().unwrap_or("<end of re-run>");
            if a != b {
                return Err(RefereeError::ReplayMismatch {
                    line: i + 1,
                    recorded: a.to_string(),
                    rerun: b.to_string(),
                });
            }
        }
        return Err(RefereeError::ReplayMismatch {
            line: n,
            recorded: "(trailing bytes differ)".into(),
            rerun: "(trailing bytes differ)".into(),
        });
    }
    Ok(record)
}

#[cfg(test)]
mod format_tests {
    use super::*;
    use crate::driver::{BoxFuture, MatchSpec};
    use kakehiki_core::replay::{ParsedReplay, ReplayHeader};
    use kakehiki_core::{Chance, Dynamics, Information, Outcome};
    use kakehiki_core::{GameType, MatchReport};

    static TOY_TYPE: GameType = GameType {
        name: "toy",
        title: "toy",
        min_seats: 1,
        max_seats: 1,
        default_seats: 1,
        dynamics: Dynamics::Simultaneous,
        information: Information::Perfect,
        chance: Chance::None,
        transports: &[],
        rule_sets: &["r"],
        builtin_bots: &[],
    };

    /// A game whose `@2` replays say `"move":N` where its `@1` ones said `"m":N`.
    struct Toy {
        declares: bool,
    }

    fn header(format: &str) -> ReplayHeader {
        ReplayHeader {
            event: "header".into(),
            format: format.into(),
            engine: "0".into(),
            game: "toy".into(),
            rules: "r".into(),
            seed: 1,
            seats: vec!["builtin:x".into()],
            params: serde_json::Value::Null,
        }
    }

    impl GameDriver for Toy {
        fn game_type(&self) -> &'static GameType {
            &TOY_TYPE
        }
        fn play<'a>(
            &'a self,
            _: &'a MatchSpec,
        ) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
            unreachable!()
        }
        fn check_spec(&self, _: &MatchSpec) -> Result<(), RefereeError> {
            unreachable!()
        }
        fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
            let mut log = ReplayLog::new();
            log.push(&header("toy@2"));
            for m in replay.events_of::<serde_json::Value>("move")? {
                log.push(&serde_json::json!({"event": "move", "move": m["move"]}));
            }
            let outcome = Outcome::by_max(vec![1.into()]);
            Ok(MatchRecord {
                report: MatchReport::new(
                    "toy",
                    "r",
                    1,
                    &outcome,
                    vec![("builtin:x".into(), vec![])],
                ),
                replay: log,
            })
        }
        fn replay_format(&self) -> Option<&'static str> {
            self.declares.then_some("toy@2")
        }
        fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
            check_format(&old.header.format, "toy@2")
                .err()
                .ok_or_else(|| RefereeError::BadReplay("not old".into()))?;
            let mut log = ReplayLog::new();
            log.push(&header("toy@2"));
            for m in old.events_of::<serde_json::Value>("move")? {
                log.push(&serde_json::json!({"event": "move", "move": m["m"]}));
            }
            Ok(log)
        }
    }

    fn v1() -> String {
        let mut log = ReplayLog::new();
        log.push(&header("toy@1"));
        log.push(&serde_json::json!({"event": "move", "m": 3}));
        log.append_header_field(SANDBOX_KEY, &"best");
        log.to_text()
    }

    #[test]
    fn an_old_replay_is_refused_then_upgraded_and_verified() {
        for declares in [true, false] {
            let toy = Toy { declares };
            let e = verify_with(&toy, &v1()).unwrap_err();
            assert!(
                matches!(&e, RefereeError::OldReplayFormat { found, current } if found == "toy@1" && current == "toy@2"),
                "{e}"
            );
            assert!(e.to_string().contains("kakehiki replay --upgrade"), "{e}");
            let up = upgrade_with(&toy, &v1()).unwrap();
            assert_eq!((up.from.as_str(), up.to.as_str()), ("toy@1", "toy@2"));
            assert!(
                up.text.contains(r#"{"event":"move","move":3}"#),
                "{}",
                up.text
            );
            assert!(up
                .text
                .lines()
                .next()
                .unwrap()
                .ends_with(r#","sandbox":"best"}"#));
            verify_with(&toy, &up.text).unwrap();
            let again = upgrade_with(&toy, &up.text).unwrap_err();
            assert!(
                again
                    .to_string()
                    .contains("already in the current format (toy@2)"),
                "{again}"
            );
        }
    }

    #[test]
    fn formats_compare_by_name_and_version() {
        assert!(check_format("a/x@2", "a/x@2").is_ok());
        assert!(matches!(
            check_format("a/x@1", "a/x@2"),
            Err(RefereeError::OldReplayFormat { .. })
        ));
        assert!(check_format("a/x@3", "a/x@2")
            .unwrap_err()
            .to_string()
            .contains("newer"));
        assert!(check_format("a/y@1", "a/x@2")
            .unwrap_err()
            .to_string()
            .contains("unknown replay format"));
        assert!(check_format("garbage", "a/x@2")
            .unwrap_err()
            .to_string()
            .contains("unknown replay format"));
        assert_eq!(
            format_version("kakehiki/nac-replay@12"),
            Some(("kakehiki/nac-replay", 12))
        );
        assert_eq!(
            format_version("kakehiki-geister/2"),
            Some(("kakehiki-geister", 2))
        );
        assert!(matches!(
            check_format("kakehiki-geister/1", "kakehiki-geister/2"),
            Err(RefereeError::OldReplayFormat { .. })
        ));
        assert!(check_format("kakehiki-geister/3", "kakehiki-geister/2")
            .unwrap_err()
            .to_string()
            .contains("newer"));
    }
}
