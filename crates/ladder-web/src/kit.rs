//! What a contestant needs to enter, served by the ladder itself so that it works offline and
//! matches the server's version: each game's protocol document (`GET /protocol`) and the
//! starter bot of each game and language (`GET /starters/LANGUAGE`), compiled into the binary
//! from the repository's `docs/protocols/` and `starters/` folders.

use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::App;

/// A game's protocol document: the game's name, the file's name, its text.
pub struct Doc {
    pub game: &'static str,
    pub file: &'static str,
    pub text: &'static str,
}

/// A starter bot: its game, its language, its file's name in the repository, its text.
pub struct Starter {
    pub game: &'static str,
    pub language: &'static str,
    pub file: &'static str,
    pub text: &'static str,
}

macro_rules! doc {
    ($game:literal, $file:literal) => {
        Doc {
            game: $game,
            file: $file,
            text: include_str!(concat!("../../../docs/protocols/", $file)),
        }
    };
}

macro_rules! starter {
    ($game:literal, $language:literal, $file:literal) => {
        Starter {
            game: $game,
            language: $language,
            file: $file,
            text: include_str!(concat!(
                "../../../starters/",
                $game,
                "/",
                $language,
                "/",
                $file
            )),
        }
    };
}

/// Each game's protocol document as its ladder bots speak it (a Diplomacy ladder bot is a JSON
/// pipe bot; the DAIDE document is for `daide` seats).
pub const DOCS: &[Doc] = &[
    doc!("nac", "nac.md"),
    doc!("religion-war", "religion-war.md"),
    doc!("geister", "geister.md"),
    doc!("werewolf", "werewolf.md"),
    doc!("werewolf-nlp", "werewolf-nlp.md"),
    doc!("diplomacy", "diplomacy.md"),
    doc!("diplomacy-daide", "diplomacy-daide.md"),
];

/// Every starter in the repository (a test checks that none is left out).
pub const STARTERS: &[Starter] = &[
    starter!("nac", "cpp", "bot.cpp"),
    starter!("nac", "java", "Main.java"),
    starter!("nac", "javascript", "bot.js"),
    starter!("nac", "python", "bot.py"),
    starter!("nac", "rust", "main.rs"),
    starter!("religion-war", "cpp", "bot.cpp"),
    starter!("religion-war", "java", "Main.java"),
    starter!("religion-war", "javascript", "bot.js"),
    starter!("religion-war", "python", "bot.py"),
    starter!("religion-war", "rust", "main.rs"),
    starter!("geister", "cpp", "bot.cpp"),
    starter!("geister", "java", "Main.java"),
    starter!("geister", "javascript", "bot.js"),
    starter!("geister", "python", "bot.py"),
    starter!("geister", "rust", "main.rs"),
    starter!("werewolf", "cpp", "bot.cpp"),
    starter!("werewolf", "java", "Main.java"),
    starter!("werewolf", "javascript", "bot.js"),
    starter!("werewolf", "python", "bot.py"),
    starter!("werewolf", "rust", "main.rs"),
    starter!("werewolf-nlp", "java", "Main.java"),
    starter!("werewolf-nlp", "python", "bot.py"),
    starter!("diplomacy", "cpp", "bot.cpp"),
    starter!("diplomacy", "java", "Main.java"),
    starter!("diplomacy", "javascript", "bot.js"),
    starter!("diplomacy", "python", "bot.py"),
    starter!("diplomacy", "rust", "main.rs"),
];

/// The protocol document of `game`.
pub fn doc(game: &str) -> Option<&'static Doc> {
    DOCS.iter().find(|d| d.game == game)
}

/// The starter of `game` in `language`.
pub fn starter(game: &str, language: &str) -> Option<&'static Starter> {
    STARTERS
        .iter()
        .find(|s| s.game == game && s.language == language)
}

/// Text shown in the browser as it is, offered under `file` when saved.
fn text_file(text: &'static str, file: &str) -> Response {
    let disposition = HeaderValue::from_str(&format!("inline; filename=\"{file}\""))
        .unwrap_or(HeaderValue::from_static("inline"));
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            ),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        text,
    )
        .into_response()
}

/// `GET /protocol`: the ladder's game's protocol document (Markdown, as plain text).
pub async fn protocol(State(app): State<App>) -> Response {
    match doc(&app.config.game) {
        Some(d) => text_file(d.text, d.file),
        None => (
            StatusCode::NOT_FOUND,
            "no protocol document for this game\n",
        )
            .into_response(),
    }
}

/// `GET /starters/LANGUAGE`: the starter of the ladder's game in one of its languages, under
/// the name the ladder's recipe builds (its entry file).
pub async fn starter_file(State(app): State<App>, Path(language): Path<String>) -> Response {
    let recipe = app.config.languages.iter().find(|(l, _)| *l == language);
    match (recipe, starter(&app.config.game, &language)) {
        (Some((_, recipe)), Some(s)) => text_file(s.text, &recipe.main),
        _ => (
            StatusCode::NOT_FOUND,
            "no starter for this language on this ladder\n",
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn every_starter_and_protocol_document_of_the_repository_is_served() {
        let mut found = Vec::new();
        for game in std::fs::read_dir(repo().join("starters")).unwrap() {
            let game = game.unwrap().path();
            if !game.is_dir() {
                continue;
            }
            for language in std::fs::read_dir(&game).unwrap() {
                let language = language.unwrap().path();
                for file in std::fs::read_dir(&language).unwrap() {
                    let file = file.unwrap().path();
                    let name =
                        |p: &std::path::Path| p.file_name().unwrap().to_string_lossy().into_owned();
                    found.push((name(&game), name(&language), name(&file)));
                }
            }
        }
        found.sort();
        let mut served: Vec<_> = STARTERS
            .iter()
            .map(|s| {
                (
                    s.game.to_string(),
                    s.language.to_string(),
                    s.file.to_string(),
                )
            })
            .collect();
        served.sort();
        assert_eq!(served, found);
        let mut docs: Vec<String> = std::fs::read_dir(repo().join("docs/protocols"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        docs.sort();
        let mut served: Vec<String> = DOCS.iter().map(|d| d.file.to_string()).collect();
        served.sort();
        assert_eq!(served, docs);
    }

    #[test]
    fn each_starter_is_named_as_its_languages_recipe_builds_it() {
        for s in STARTERS {
            let recipe = kakehiki_ladder::config::default_recipe(s.language).unwrap();
            assert_eq!(recipe.main, s.file, "{} {}", s.game, s.language);
        }
    }
}
