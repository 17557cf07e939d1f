//! Built-in natural-language agents that need no model.
//!
//! * `sample` / `sample-en`: decide with the 0.6 division's sample strategy
//!   ([`crate::bots::SampleAgent`], unchanged) and speak its protocol-3.6 sentences as short
//!   Japanese or English sentences from templates, with `@Name` mentions. They read other agents'
//!   talk by matching it against the same templates (in both languages); free text they cannot
//!   read is ignored, as the sample strategy ignores unparsable talk.
//! * `random` / `random-en`: random valid targets and random template sentences.
//!
//! A built-in agent sees only the packets a WebSocket agent in its seat would receive.

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::Rng;

use kakehiki_core::{seeded_rng, SeedRng};

use super::packet::{JudgeEntry, Packet, RequestKind, TalkEntry, Text, VoteEntry, OVER};
use crate::bots::Agent;
use crate::engine::Reply;
use crate::info::GameInfo;
use crate::settings::Settings;
use crate::talk;
use crate::talk::Talk;
use crate::types::{agent_str, Judge, Request, Role, Species, Status, Vote};

/// Names of the built-in agents (`builtin:<name>`).
pub const NLP_BUILTIN_NAMES: &[&str] = &["sample", "sample-en", "random", "random-en"];

/// An in-process agent of the natural-language division.
pub trait NlAgent: Send {
    /// Read one packet; answer it when it needs an answer.
    fn answer(&mut self, packet: &Packet) -> Option<String>;
}

/// A built-in agent by name; its randomness comes from the game seed and its seat.
pub fn nl_builtin(name: &str, game_seed: u64, seat: usize) -> Option<Box<dyn NlAgent>> {
    let rng = seeded_rng(game_seed, &format!("werewolf-nlp-agent-{seat}-{name}"));
    let (base, lang) = match name.strip_suffix("-en") {
        Some(b) => (b, Lang::En),
        None => (name, Lang::Ja),
    };
    match base {
        "sample" => Some(Box::new(SampleNl {
            inner: crate::bots::builtin("sample", game_seed, seat + 1)?,
            conv_talks: Vec::new(),
            conv_whispers: Vec::new(),
            view: View::default(),
            lang,
            greeted: u32::MAX,
            settings: None,
        })),
        "random" => Some(Box::new(RandomNl {
            rng,
            view: View::default(),
            lang,
        })),
        _ => None,
    }
}

/// The language of a bot's sentences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Ja,
    En,
}

fn role_word(r: Role, lang: Lang) -> &'static str {
    match (lang, r) {
        (Lang::Ja, Role::Werewolf) => "人狼",
        (Lang::Ja, Role::Possessed) => "狂人",
        (Lang::Ja, Role::Seer) => "占い師",
        (Lang::Ja, Role::Bodyguard) => "騎士",
        (Lang::Ja, Role::Villager) => "村人",
        (Lang::Ja, Role::Medium) => "霊媒師",
        (Lang::Ja, _) => "村人",
        (Lang::En, Role::Werewolf) => "werewolf",
        (Lang::En, Role::Possessed) => "possessed",
        (Lang::En, Role::Seer) => "seer",
        (Lang::En, Role::Bodyguard) => "bodyguard",
        (Lang::En, Role::Villager) => "villager",
        (Lang::En, Role::Medium) => "medium",
        (Lang::En, _) => "villager",
    }
}

fn species_word(s: Species, lang: Lang) -> &'static str {
    match (lang, s) {
        (Lang::Ja, Species::Werewolf) => "人狼",
        (Lang::Ja, Species::Human) => "人間",
        (Lang::En, Species::Werewolf) => "a werewolf",
        (Lang::En, Species::Human) => "human",
    }
}

const ROLES: [Role; 6] = [
    Role::Werewolf,
    Role::Possessed,
    Role::Seer,
    Role::Bodyguard,
    Role::Villager,
    Role::Medium,
];

/// Sentence templates: `{t}` a player name, `{r}` a role word, `{s}` a species word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Comingout,
    Divined,
    Identified,
    Vote,
    Attack,
    Estimate,
}

const FORMS: [Form; 6] = [
    Form::Comingout,
    Form::Divined,
    Form::Identified,
    Form::Vote,
    Form::Attack,
    Form::Estimate,
];

fn template(f: Form, lang: Lang) -> &'static str {
    match (f, lang) {
        (Form::Comingout, Lang::Ja) => "私は{r}です。",
        (Form::Comingout, Lang::En) => "I am the {r}.",
        (Form::Divined, Lang::Ja) => "占いの結果、@{t} は{s}でした。",
        (Form::Divined, Lang::En) => "I divined @{t}: {s}.",
        (Form::Identified, Lang::Ja) => "霊媒の結果、{t} は{s}でした。",
        (Form::Identified, Lang::En) => "The medium result for {t}: {s}.",
        (Form::Vote, Lang::Ja) => "@{t} に投票します。",
        (Form::Vote, Lang::En) => "I will vote for @{t}.",
        (Form::Attack, Lang::Ja) => "今夜は {t} を襲おう。",
        (Form::Attack, Lang::En) => "Let's attack {t} tonight.",
        (Form::Estimate, Lang::Ja) => "{t} は{r}だと思います。",
        (Form::Estimate, Lang::En) => "I think {t} is the {r}.",
    }
}

fn greeting(lang: Lang) -> &'static str {
    match lang {
        Lang::Ja => "よろしくお願いします。",
        Lang::En => "Hello, everyone.",
    }
}

fn fill(f: Form, lang: Lang, t: &str, r: Option<Role>, s: Option<Species>) -> String {
    template(f, lang)
        .replace("{t}", t)
        .replace("{r}", r.map(|r| role_word(r, lang)).unwrap_or(""))
        .replace("{s}", s.map(|s| species_word(s, lang)).unwrap_or(""))
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// What a template sentence says, read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meaning {
    form: Form,
    target: Option<String>,
    role: Option<Role>,
    species: Option<Species>,
}

/// Read `text` as one of the template sentences (either language; spaces ignored).
fn read(text: &str, names: &[Text]) -> Option<Meaning> {
    let text = squash(text);
    for lang in [Lang::Ja, Lang::En] {
        for f in FORMS {
            let tpl = template(f, lang);
            let sq = squash(tpl);
            let head = &sq[..sq.find('{').unwrap_or(sq.len())];
            let tail = &sq[sq.rfind('}').map_or(sq.len(), |i| i + 1)..];
            if !text.starts_with(head) || !text.ends_with(tail) {
                continue;
            }
            let tn: &[Option<&Text>] = if tpl.contains("{t}") {
                &names.iter().map(Some).collect::<Vec<_>>()
            } else {
                &[None]
            };
            for t in tn {
                let rs: Vec<Option<Role>> = if tpl.contains("{r}") {
                    ROLES.iter().copied().map(Some).collect()
                } else {
                    vec![None]
                };
                let ss: Vec<Option<Species>> = if tpl.contains("{s}") {
                    vec![Some(Species::Werewolf), Some(Species::Human)]
                } else {
                    vec![None]
                };
                for r in &rs {
                    for s in &ss {
                        let cand = fill(f, lang, t.map(|t| &**t).unwrap_or(""), *r, *s);
                        if squash(&cand) == text {
                            return Some(Meaning {
                                form: f,
                                target: t.map(|t| t.to_string()),
                                role: *r,
                                species: *s,
                            });
                        }
                    }
                }
            }
        }
    }
    None
}

/// What an agent has learnt from its packets.
#[derive(Debug, Default)]
struct View {
    me: Text,
    names: Vec<Text>,
    day: u32,
    status: BTreeMap<Text, &'static str>,
    role_map: BTreeMap<Text, &'static str>,
    talks: Vec<TalkEntry>,
    whispers: Vec<TalkEntry>,
    vote_list: Vec<VoteEntry>,
    executed: Option<Text>,
    attacked: Option<Text>,
    divine: Option<JudgeEntry>,
    medium: Option<JudgeEntry>,
    roles_in_game: Vec<Role>,
}

impl View {
    fn update(&mut self, p: &Packet) {
        if let Some(s) = &p.setting {
            self.roles_in_game = s
                .role_num_map
                .iter()
                .filter(|(_, n)| **n > 0)
                .filter_map(|(r, _)| Role::from_name(r))
                .collect();
        }
        if let Some(i) = &p.info {
            if i.day != self.day || self.me.is_empty() {
                self.talks.clear();
                self.whispers.clear();
            }
            self.me = i.agent.clone();
            self.day = i.day;
            self.status = i.status_map.clone();
            self.names = i.status_map.keys().cloned().collect();
            self.role_map = i.role_map.clone();
            self.vote_list = i.vote_list.clone();
            self.executed = i.executed_agent.clone();
            self.attacked = i.attacked_agent.clone();
            self.divine = i.divine_result.clone();
            self.medium = i.medium_result.clone();
        }
        let add = |list: &mut Vec<TalkEntry>, new: &[TalkEntry]| {
            for e in new {
                if e.idx as usize >= list.len() {
                    list.push(e.clone());
                }
            }
        };
        if let Some(h) = &p.talk_history {
            add(&mut self.talks, h);
        }
        if let Some(h) = &p.whisper_history {
            add(&mut self.whispers, h);
        }
        if let Some(e) = &p.new_talk {
            add(&mut self.talks, std::slice::from_ref(e));
        }
        if let Some(e) = &p.new_whisper {
            add(&mut self.whispers, std::slice::from_ref(e));
        }
    }

    /// 1-based number of a name (its place in the sorted names).
    fn num(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| **n == *name).map(|i| i + 1)
    }
    fn name(&self, num: usize) -> Option<&str> {
        self.names.get(num.wrapping_sub(1)).map(|n| &**n)
    }
    fn alive_others(&self) -> Vec<Text> {
        self.status
            .iter()
            .filter(|(n, s)| **s == "ALIVE" && **n != self.me)
            .map(|(n, _)| n.clone())
            .collect()
    }
}

// ----- sample -----------------------------------------------------------------------------------

struct SampleNl {
    inner: Box<dyn Agent>,
    /// Today's talks and whispers as protocol sentences, converted once.
    conv_talks: Vec<Talk>,
    conv_whispers: Vec<Talk>,
    view: View,
    lang: Lang,
    greeted: u32,
    settings: Option<Settings>,
}

impl SampleNl {
    /// Another agent's speech as a protocol sentence the sample strategy reads.
    fn to_protocol(&self, e: &TalkEntry) -> String {
        if e.skip {
            return "Skip".into();
        }
        if e.over {
            return OVER.into();
        }
        let Some(m) = read(&e.text, &self.view.names) else {
            return String::new();
        };
        let speaker = self.view.num(&e.agent).unwrap_or(0);
        let t = m
            .target
            .as_deref()
            .and_then(|n| self.view.num(n))
            .map(agent_str)
            .unwrap_or_default();
        match m.form {
            Form::Comingout => format!(
                "COMINGOUT {} {}",
                agent_str(speaker),
                m.role.unwrap_or(Role::Villager).name()
            ),
            Form::Divined => format!("DIVINED {t} {}", m.species.unwrap_or(Species::Human).name()),
            Form::Identified => {
                format!(
                    "IDENTIFIED {t} {}",
                    m.species.unwrap_or(Species::Human).name()
                )
            }
            Form::Vote => format!("VOTE {t}"),
            Form::Attack => format!("ATTACK {t}"),
            Form::Estimate => format!("ESTIMATE {t} {}", m.role.unwrap_or(Role::Villager).name()),
        }
    }

    /// Bring the converted lists up to date with the view.
    fn convert(&mut self) {
        for whisper in [false, true] {
            let (src, dst) = if whisper {
                (&self.view.whispers, &self.conv_whispers)
            } else {
                (&self.view.talks, &self.conv_talks)
            };
            let stale = dst.len() > src.len()
                || dst
                    .iter()
                    .zip(src.iter())
                    .any(|(d, s)| d.idx != s.idx || d.day != s.day);
            let start = if stale { 0 } else { dst.len() };
            let new = self.talks(&src[start..]);
            let dst = if whisper {
                &mut self.conv_whispers
            } else {
                &mut self.conv_talks
            };
            if stale {
                dst.clear();
            }
            dst.extend(new);
        }
    }

    fn talks(&self, list: &[TalkEntry]) -> Vec<Talk> {
        list.iter()
            .map(|e| {
                let text = self.to_protocol(e);
                let parsed = talk::parse(&text).ok().map(Arc::new);
                Talk {
                    idx: e.idx,
                    day: e.day,
                    turn: e.turn,
                    agent: self.view.num(&e.agent).unwrap_or(0),
                    text,
                    parsed,
                }
            })
            .collect()
    }

    /// A protocol sentence of the sample strategy as a template sentence.
    fn render(&self, proto: &str, whispers: &[Talk]) -> String {
        let words: Vec<&str> = proto.split_whitespace().collect();
        let name_of = |w: &str| {
            w.strip_prefix("Agent[")
                .and_then(|x| x.strip_suffix(']'))
                .and_then(|x| x.parse::<usize>().ok())
                .and_then(|n| self.view.name(n))
                .map(str::to_string)
        };
        let l = self.lang;
        match words.as_slice() {
            ["COMINGOUT", _, r] => fill(Form::Comingout, l, "", Role::from_name(r), None),
            ["DIVINED", a, s] | ["IDENTIFIED", a, s] => {
                let f = if words[0] == "DIVINED" {
                    Form::Divined
                } else {
                    Form::Identified
                };
                let sp = if *s == "WEREWOLF" {
                    Species::Werewolf
                } else {
                    Species::Human
                };
                match name_of(a) {
                    Some(n) => fill(f, l, &n, None, Some(sp)),
                    None => OVER.into(),
                }
            }
            ["VOTE", a] => name_of(a).map_or(OVER.into(), |n| fill(Form::Vote, l, &n, None, None)),
            ["ATTACK", a] => {
                name_of(a).map_or(OVER.into(), |n| fill(Form::Attack, l, &n, None, None))
            }
            ["ESTIMATE", a, r] => name_of(a).map_or(OVER.into(), |n| {
                fill(Form::Estimate, l, &n, Role::from_name(r), None)
            }),
            ["AGREE", "WHISPER", _, id] => {
                // Agreeing with a fellow wolf's plan: say the plan again.
                let id: Option<u32> = id.strip_prefix("ID:").and_then(|x| x.parse().ok());
                whispers
                    .iter()
                    .find(|w| Some(w.idx) == id)
                    .map(|w| self.render(&w.text.clone(), &[]))
                    .unwrap_or_else(|| OVER.into())
            }
            ["Skip"] => "Skip".into(),
            _ => OVER.into(),
        }
    }
}

fn request_of(k: RequestKind) -> Option<Request> {
    Some(match k {
        RequestKind::Talk => Request::Talk,
        RequestKind::Whisper => Request::Whisper,
        RequestKind::Vote => Request::Vote,
        RequestKind::Divine => Request::Divine,
        RequestKind::Guard => Request::Guard,
        RequestKind::Attack => Request::Attack,
        _ => return None,
    })
}

impl NlAgent for SampleNl {
    fn answer(&mut self, packet: &Packet) -> Option<String> {
        self.view.update(packet);
        if packet.request == RequestKind::Name {
            return Some("kakehiki".into());
        }
        let request = request_of(packet.request)?;
        if request == Request::Talk && self.view.day == 0 {
            // The sample strategy is silent on day 0; say hello once, then Over.
            if self.greeted != 0 {
                self.greeted = 0;
                return Some(greeting(self.lang).into());
            }
            return Some(OVER.into());
        }
        let v = &self.view;
        let n = v.names.len();
        let settings = self
            .settings
            .get_or_insert_with(|| {
                Settings::for_rules("aiwolf-0.6", n.max(5)).unwrap_or_else(|_| {
                    Settings::for_rules("aiwolf-0.6", 5).expect("5 players are valid")
                })
            })
            .clone();
        self.convert();
        let talks = &self.conv_talks;
        let whispers = &self.conv_whispers;
        let v = &self.view;
        let judge = |j: &Option<JudgeEntry>| {
            j.as_ref().and_then(|j| {
                Some(Judge {
                    agent: v.num(&v.me)?,
                    day: v.day,
                    target: v.num(&j.target)?,
                    result: if j.result == "WEREWOLF" {
                        Species::Werewolf
                    } else {
                        Species::Human
                    },
                })
            })
        };
        let votes: Vec<Vote> = v
            .vote_list
            .iter()
            .filter_map(|x| {
                Some(Vote {
                    agent: v.num(&x.agent)?,
                    day: x.day,
                    target: v.num(&x.target)?,
                })
            })
            .collect();
        let info = GameInfo {
            agent: v.num(&v.me).unwrap_or(1),
            attack_vote_list: &[],
            attacked_agent: v.attacked.as_deref().and_then(|a| v.num(a)),
            day: v.day,
            divine_result: judge(&v.divine),
            executed_agent: v.executed.as_deref().and_then(|a| v.num(a)),
            existing_role_list: &v.roles_in_game,
            guarded_agent: None,
            last_dead_agent_list: &[],
            latest_attack_vote_list: &[],
            latest_executed_agent: None,
            latest_vote_list: &[],
            medium_result: judge(&v.medium),
            remain_talk_map: Vec::new(),
            remain_whisper_map: Vec::new(),
            role_map: v
                .role_map
                .iter()
                .filter_map(|(a, r)| Some((v.num(a)?, Role::from_name(r)?)))
                .collect(),
            status_map: v
                .names
                .iter()
                .map(|a| {
                    if v.status.get(a) == Some(&"ALIVE") {
                        Status::Alive
                    } else {
                        Status::Dead
                    }
                })
                .collect(),
            talk_list: talks,
            vote_list: &votes,
            whisper_list: whispers,
        };
        let reply = self.inner.act(request, &info, &settings);
        match reply {
            Reply::Text(s) => Some(self.render(&s, &self.conv_whispers)),
            Reply::Target(Some(t)) => self.view.name(t).map(str::to_string),
            Reply::Target(None) | Reply::Silent => {
                self.view.alive_others().first().map(|n| n.to_string())
            }
        }
    }
}

// ----- random -----------------------------------------------------------------------------------

struct RandomNl {
    rng: SeedRng,
    view: View,
    lang: Lang,
}

impl RandomNl {
    fn any(&mut self) -> Option<Text> {
        let c = self.view.alive_others();
        if c.is_empty() {
            None
        } else {
            Some(c[self.rng.gen_range(0..c.len())].clone())
        }
    }
}

impl NlAgent for RandomNl {
    fn answer(&mut self, packet: &Packet) -> Option<String> {
        self.view.update(packet);
        match packet.request {
            RequestKind::Name => Some("random".into()),
            RequestKind::Talk | RequestKind::Whisper => {
                let l = self.lang;
                let roll = self.rng.gen_range(0..8);
                let role = ROLES[self.rng.gen_range(0..ROLES.len())];
                let sp = if self.rng.gen_bool(0.5) {
                    Species::Werewolf
                } else {
                    Species::Human
                };
                let t = self.any().unwrap_or_default();
                Some(match roll {
                    0 => fill(Form::Comingout, l, "", Some(role), None),
                    1 => fill(Form::Divined, l, &t, None, Some(sp)),
                    2 => fill(Form::Vote, l, &t, None, None),
                    3 => fill(Form::Estimate, l, &t, Some(role), None),
                    4 if packet.request == RequestKind::Whisper => {
                        fill(Form::Attack, l, &t, None, None)
                    }
                    4 | 5 => greeting(l).into(),
                    6 => "Skip".into(),
                    _ => OVER.into(),
                })
            }
            RequestKind::Vote | RequestKind::Divine | RequestKind::Guard | RequestKind::Attack => {
                Some(
                    self.any()
                        .unwrap_or_else(|| self.view.me.clone())
                        .to_string(),
                )
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_read_back_in_both_languages() {
        let names: Vec<Text> = (1..=5).map(|i| Text::from(agent_str(i))).collect();
        for lang in [Lang::Ja, Lang::En] {
            let s = fill(Form::Vote, lang, "Agent[03]", None, None);
            let m = read(&s, &names).unwrap();
            assert_eq!(m.form, Form::Vote);
            assert_eq!(m.target.as_deref(), Some("Agent[03]"));
            // The server re-spaces mentions: " @Agent[03] ".
            let spaced = s.replace("@Agent[03]", " @Agent[03] ");
            assert_eq!(
                read(&spaced, &names).unwrap().target.as_deref(),
                Some("Agent[03]")
            );
            let d = fill(
                Form::Divined,
                lang,
                "Agent[02]",
                None,
                Some(Species::Werewolf),
            );
            let m = read(&d, &names).unwrap();
            assert_eq!(
                (m.form, m.species),
                (Form::Divined, Some(Species::Werewolf))
            );
            let c = fill(Form::Comingout, lang, "", Some(Role::Seer), None);
            assert_eq!(read(&c, &names).unwrap().role, Some(Role::Seer));
        }
        assert_eq!(read("I think we should all calm down.", &names), None);
    }

    #[test]
    fn every_builtin_name_builds() {
        for n in NLP_BUILTIN_NAMES {
            assert!(nl_builtin(n, 1, 0).is_some(), "{n}");
        }
        assert!(nl_builtin("strong", 1, 0).is_none());
    }
}
