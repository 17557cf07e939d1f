//! The packets the server sends (JSON text frames), as the upstream schema defines them. Agents
//! answer with raw text. Field names, order of presence and omission follow the upstream server:
//! absent optional fields and empty vote lists are left out; maps are sorted by agent name.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::settings::{NlpSettings, TalkLimits};

/// An agent's name, a game id or a talk's text as the packets carry them: shared, so that the
/// many packets of a game copy none of them.
pub type Text = Arc<str>;

/// Request kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RequestKind {
    Name,
    Initialize,
    DailyInitialize,
    Talk,
    Whisper,
    DailyFinish,
    Divine,
    Guard,
    Vote,
    Attack,
    Finish,
    TalkPhaseStart,
    TalkPhaseEnd,
    TalkBroadcast,
    WhisperPhaseStart,
    WhisperPhaseEnd,
    WhisperBroadcast,
}

impl RequestKind {
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::Name => "NAME",
            RequestKind::Initialize => "INITIALIZE",
            RequestKind::DailyInitialize => "DAILY_INITIALIZE",
            RequestKind::Talk => "TALK",
            RequestKind::Whisper => "WHISPER",
            RequestKind::DailyFinish => "DAILY_FINISH",
            RequestKind::Divine => "DIVINE",
            RequestKind::Guard => "GUARD",
            RequestKind::Vote => "VOTE",
            RequestKind::Attack => "ATTACK",
            RequestKind::Finish => "FINISH",
            RequestKind::TalkPhaseStart => "TALK_PHASE_START",
            RequestKind::TalkPhaseEnd => "TALK_PHASE_END",
            RequestKind::TalkBroadcast => "TALK_BROADCAST",
            RequestKind::WhisperPhaseStart => "WHISPER_PHASE_START",
            RequestKind::WhisperPhaseEnd => "WHISPER_PHASE_END",
            RequestKind::WhisperBroadcast => "WHISPER_BROADCAST",
        }
    }

    /// Whether the agent must answer.
    pub fn needs_response(self) -> bool {
        matches!(
            self,
            RequestKind::Name
                | RequestKind::Talk
                | RequestKind::Whisper
                | RequestKind::Divine
                | RequestKind::Guard
                | RequestKind::Vote
                | RequestKind::Attack
        )
    }
}

/// One packet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Packet {
    pub request: RequestKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub info: Option<Info>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "arc_setting"
    )]
    pub setting: Option<Arc<SettingPacket>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub talk_history: Option<Vec<TalkEntry>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whisper_history: Option<Vec<TalkEntry>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_talk: Option<TalkEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_whisper: Option<TalkEntry>,
}

impl Packet {
    /// A packet with only a request.
    pub fn bare(request: RequestKind) -> Packet {
        Packet {
            request,
            info: None,
            setting: None,
            talk_history: None,
            whisper_history: None,
            new_talk: None,
            new_whisper: None,
        }
    }

    /// The packet as the JSON text sent on the wire.
    pub fn to_json(&self) -> String {
        // Room for a usual packet at once, rather than growing from serde_json's 128 bytes.
        let mut out = Vec::with_capacity(2048);
        match serde_json::to_writer(&mut out, self) {
            // serde_json writes UTF-8 only.
            Ok(()) => String::from_utf8(out).unwrap_or_default(),
            Err(e) => format!("{{\"error\":{:?}}}", e.to_string()),
        }
    }
}

fn arc_setting<S: serde::Serializer>(
    v: &Option<Arc<SettingPacket>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Some(a) => a.as_ref().serialize(s),
        None => s.serialize_none(),
    }
}

/// `info`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Info {
    pub game_id: Text,
    pub day: u32,
    pub agent: Text,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medium_result: Option<JudgeEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divine_result: Option<JudgeEntry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executed_agent: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attacked_agent: Option<Text>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub vote_list: Vec<VoteEntry>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub attack_vote_list: Vec<VoteEntry>,
    pub status_map: BTreeMap<Text, &'static str>,
    pub role_map: BTreeMap<Text, &'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remain_count: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remain_length: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remain_skip: Option<i64>,
}

/// A divination or medium result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JudgeEntry {
    pub day: u32,
    pub agent: Text,
    pub target: Text,
    pub result: &'static str,
}

/// One vote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VoteEntry {
    pub day: u32,
    pub agent: Text,
    pub target: Text,
}

/// One talk or whisper.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TalkEntry {
    pub idx: u32,
    pub day: u32,
    /// In turns, the round; in group chat, how many of the agent's messages the phase accepted
    /// before this one (upstream's per-agent count, from 0).
    pub turn: u32,
    pub agent: Text,
    pub text: Text,
    pub skip: bool,
    pub over: bool,
    /// When the server received it, in Unix milliseconds (upstream's schema requires it): the
    /// game's start (its `game_id`'s time) plus the table's clock ([`super::game::Table::elapsed_ms`]),
    /// so that a re-run of a replay sends the same time.
    pub time: u64,
}

/// `Over`, `Skip` and the server's substitute for a failed request.
pub const OVER: &str = "Over";
pub const SKIP: &str = "Skip";
pub const FORCE_SKIP: &str = "ForceSkip";

impl TalkEntry {
    /// A talk of `agent` saying `text`, received at `time` (Unix milliseconds); `skip` and
    /// `over` follow from the text.
    pub fn new(
        idx: u32,
        day: u32,
        turn: u32,
        agent: Text,
        text: impl Into<Text>,
        time: u64,
    ) -> TalkEntry {
        let text = text.into();
        let skip = *text == *SKIP || *text == *FORCE_SKIP;
        let over = *text == *OVER;
        TalkEntry {
            idx,
            day,
            turn,
            agent,
            text,
            skip,
            over,
            time,
        }
    }
}

/// `setting`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingPacket {
    pub agent_count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_day: Option<u32>,
    pub role_num_map: BTreeMap<&'static str, usize>,
    pub vote_visibility: bool,
    pub talk: TalkSettingPacket,
    pub whisper: TalkSettingPacket,
    pub vote: VoteSettingPacket,
    pub attack_vote: AttackVoteSettingPacket,
    pub timeout: TimeoutPacket,
}

/// `setting.talk` / `setting.whisper`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TalkSettingPacket {
    pub max_count: MaxCountPacket,
    pub max_length: MaxLengthPacket,
    /// Group-chat mode: the phase's time in milliseconds; left out in turns (upstream sends it
    /// only when the configuration sets `duration`), so an agent can tell the mode from
    /// `setting`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<u64>,
    pub max_skip: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MaxCountPacket {
    pub per_agent: u32,
    pub per_day: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MaxLengthPacket {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_in_word: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count_spaces: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_talk: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mention_length: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_agent: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_length: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VoteSettingPacket {
    pub max_count: u32,
    pub allow_self_vote: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttackVoteSettingPacket {
    pub max_count: u32,
    pub allow_self_vote: bool,
    pub allow_no_target: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimeoutPacket {
    pub action: u64,
    pub response: u64,
}

fn talk_setting(l: &TalkLimits) -> TalkSettingPacket {
    let any = l.per_talk.is_some() || l.per_agent_length.is_some() || l.base_length.is_some();
    let mention = l.per_agent_length.is_some() || l.base_length.is_some();
    TalkSettingPacket {
        max_count: MaxCountPacket {
            per_agent: l.per_agent,
            per_day: l.per_day,
        },
        max_length: MaxLengthPacket {
            count_in_word: any.then_some(l.count_in_word),
            count_spaces: any.then_some(l.count_spaces),
            per_talk: l.per_talk,
            mention_length: mention.then_some(l.mention_length),
            per_agent: l.per_agent_length,
            base_length: l.base_length,
        },
        duration: l.duration_ms,
        max_skip: l.max_skip,
    }
}

impl SettingPacket {
    pub fn from_settings(s: &NlpSettings) -> SettingPacket {
        SettingPacket {
            agent_count: s.agent_count,
            max_day: s.max_day,
            role_num_map: s.roles.iter().map(|(r, n)| (r.name(), *n)).collect(),
            vote_visibility: s.vote_visibility,
            talk: talk_setting(&s.talk),
            whisper: talk_setting(&s.whisper),
            vote: VoteSettingPacket {
                max_count: s.vote_max_count,
                allow_self_vote: s.vote_allow_self,
            },
            attack_vote: AttackVoteSettingPacket {
                max_count: s.attack_max_count,
                allow_self_vote: s.attack_allow_self,
                allow_no_target: s.attack_allow_no_target,
            },
            timeout: TimeoutPacket {
                action: s.timeout_action_ms,
                response: s.timeout_response_ms,
            },
        }
    }
}
