//! The standard map, loaded from the facts file `data/standard-map.json` (embedded at compile time).
//!
//! Provinces get ids `0..75` in ascending byte order of their abbreviation; the six coasts of the
//! split-coast provinces get the location ids `75..81`, also sorted. A *location* is a province id
//! (armies, fleets outside split-coast provinces) or a coast id. Adjacency is held as bitsets
//! (`u128`) so the resolver never touches a string.

use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

pub use crate::types::Loc;
use crate::types::{Power, Unit, UnitKind, POWER_NAMES};

/// Province id (`0..NUM_PROVINCES`).
pub type Prov = u8;

/// Number of provinces of the standard map.
pub const NUM_PROVINCES: usize = 75;

/// The facts file of the standard map, as shipped with this crate.
pub const STANDARD_MAP_JSON: &str = include_str!("../data/standard-map.json");

/// What a province is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProvinceKind {
    /// Open water, fleets only.
    Sea,
    /// Land touching water: armies and fleets.
    Coast,
    /// Inland: armies only.
    Land,
}

/// One province of the map.
#[derive(Clone, Debug)]
pub struct Province {
    /// Canonical abbreviation (`PAR`).
    pub abbr: String,
    /// English name (`Paris`).
    pub name: String,
    /// Sea, coast or land.
    pub kind: ProvinceKind,
    /// Whether the province is a supply centre.
    pub supply_center: bool,
    /// The power whose home centre this is.
    pub home_of: Option<Power>,
    /// Coast location ids of a split-coast province (empty otherwise).
    pub coasts: Vec<Loc>,
}

/// The map: provinces, locations and adjacency as bitsets.
#[derive(Debug)]
pub struct Map {
    /// Provinces by id.
    pub provinces: Vec<Province>,
    loc_names: Vec<String>,
    loc_prov: Vec<Prov>,
    army_adj: Vec<u128>,
    fleet_adj: Vec<u128>,
    fleet_adj_prov: Vec<u128>,
    sea_nbrs: Vec<u128>,
    prov_graph: Vec<u128>,
    seas: u128,
    lookup: HashMap<String, Prov>,
    /// Three-letter names (canonical and aliases) indexed by `(c0*26 + c1)*26 + c2`.
    short: Vec<u8>,
    /// Rank of each location's name in ascending byte order.
    loc_rank: Vec<u8>,
    /// The 1901 units.
    pub start_units: Vec<Unit>,
    /// The 1901 centre ownership.
    pub start_centers: Vec<(Prov, Power)>,
}

#[derive(Deserialize)]
struct RawMap {
    format: String,
    powers: Vec<String>,
    provinces: BTreeMap<String, RawProvince>,
    coasts: BTreeMap<String, RawCoast>,
    adjacency: RawAdjacency,
    start: RawStart,
    aliases: RawAliases,
}

#[derive(Deserialize)]
struct RawProvince {
    name: String,
    kind: String,
    supply_center: bool,
    home_of: Option<String>,
    coasts: Vec<String>,
}

#[derive(Deserialize)]
struct RawCoast {
    province: String,
}

#[derive(Deserialize)]
struct RawAdjacency {
    army: BTreeMap<String, Vec<String>>,
    fleet: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
struct RawStart {
    units: BTreeMap<String, Vec<String>>,
    centers: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
struct RawAliases {
    province: BTreeMap<String, String>,
}

/// A map facts file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum MapError {
    /// Not valid JSON of the expected shape.
    #[error("map file is not valid: {0}")]
    Json(#[from] serde_json::Error),
    /// Valid JSON whose content does not fit the standard board.
    #[error("map file is inconsistent: {0}")]
    Content(String),
}

fn bad(msg: impl Into<String>) -> MapError {
    MapError::Content(msg.into())
}

fn short_index(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    if b.len() == 3 && b.iter().all(u8::is_ascii_uppercase) {
        Some(((b[0] - b'A') as usize * 26 + (b[1] - b'A') as usize) * 26 + (b[2] - b'A') as usize)
    } else {
        None
    }
}

/// Bit of one id in a `u128` set.
#[inline]
pub const fn bit(i: u8) -> u128 {
    1u128 << i
}

/// Iterate the ids of a `u128` set in ascending order.
#[inline]
pub fn bits(mut set: u128) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        if set == 0 {
            None
        } else {
            let i = set.trailing_zeros() as u8;
            set &= set - 1;
            Some(i)
        }
    })
}

/// Breadth-first search from the ids in `start` (layer 0) over `nbrs`: `visit(id, layer)` for
/// every id reached, layer by layer, ascending within a layer.
pub(crate) fn bfs_layers(start: u128, nbrs: impl Fn(u8) -> u128, mut visit: impl FnMut(u8, u32)) {
    let mut frontier = start;
    let mut seen = start;
    let mut layer = 0;
    while frontier != 0 {
        let mut next = 0u128;
        for i in bits(frontier) {
            visit(i, layer);
            next |= nbrs(i);
        }
        next &= !seen;
        seen |= next;
        frontier = next;
        layer += 1;
    }
}

impl Map {
    /// Build the map from a facts file in the `kakehiki-diplomacy-map/1` format.
    pub fn from_json(text: &str) -> Result<Map, MapError> {
        let raw: RawMap = serde_json::from_str(text)?;
        if raw.format != "kakehiki-diplomacy-map/1" {
            return Err(bad(format!("unknown format {:?}", raw.format)));
        }
        if raw.powers != POWER_NAMES {
            return Err(bad("powers differ from the seven standard powers"));
        }
        if raw.provinces.len() != NUM_PROVINCES {
            return Err(bad(format!(
                "{} provinces, expected {NUM_PROVINCES}",
                raw.provinces.len()
            )));
        }
        let power = |s: &str| -> Result<Power, MapError> {
            Power::from_name(s).ok_or_else(|| bad(format!("unknown power {s:?}")))
        };
        let mut ids: HashMap<String, Loc> = HashMap::new();
        for (i, abbr) in raw.provinces.keys().enumerate() {
            ids.insert(abbr.clone(), i as Loc);
        }
        let mut loc_names: Vec<String> = raw.provinces.keys().cloned().collect();
        let mut loc_prov: Vec<Prov> = (0..NUM_PROVINCES as u8).collect();
        for (name, c) in &raw.coasts {
            let p = *ids
                .get(&c.province)
                .ok_or_else(|| bad(format!("coast {name} of unknown province")))?;
            ids.insert(name.clone(), loc_names.len() as Loc);
            loc_names.push(name.clone());
            loc_prov.push(p);
        }
        let loc = |s: &str| -> Result<Loc, MapError> {
            ids.get(s)
                .copied()
                .ok_or_else(|| bad(format!("unknown location {s:?}")))
        };
        let mut provinces = Vec::with_capacity(NUM_PROVINCES);
        for (abbr, p) in &raw.provinces {
            let kind = match p.kind.as_str() {
                "sea" => ProvinceKind::Sea,
                "coast" => ProvinceKind::Coast,
                "land" => ProvinceKind::Land,
                k => return Err(bad(format!("unknown kind {k:?} of {abbr}"))),
            };
            let home_of = match &p.home_of {
                Some(h) => Some(power(h)?),
                None => None,
            };
            let coasts = p
                .coasts
                .iter()
                .map(|c| loc(c))
                .collect::<Result<Vec<_>, _>>()?;
            provinces.push(Province {
                abbr: abbr.clone(),
                name: p.name.clone(),
                kind,
                supply_center: p.supply_center,
                home_of,
                coasts,
            });
        }
        let nloc = loc_names.len();
        let mut army_adj = vec![0u128; NUM_PROVINCES];
        for (from, tos) in &raw.adjacency.army {
            let f = loc(from)?;
            for t in tos {
                army_adj[f as usize] |= bit(loc(t)?);
            }
        }
        let mut fleet_adj = vec![0u128; nloc];
        let mut fleet_adj_prov = vec![0u128; nloc];
        for (from, tos) in &raw.adjacency.fleet {
            let f = loc(from)?;
            for t in tos {
                let t = loc(t)?;
                fleet_adj[f as usize] |= bit(t);
                fleet_adj_prov[f as usize] |= bit(loc_prov[t as usize]);
            }
        }
        let mut seas = 0u128;
        for (i, p) in provinces.iter().enumerate() {
            if p.kind == ProvinceKind::Sea {
                seas |= bit(i as u8);
            }
        }
        let mut sea_nbrs = vec![0u128; NUM_PROVINCES];
        let mut prov_graph = vec![0u128; NUM_PROVINCES];
        for l in 0..nloc {
            let p = loc_prov[l] as usize;
            sea_nbrs[p] |= fleet_adj_prov[l] & seas;
            prov_graph[p] |= fleet_adj_prov[l];
        }
        for p in 0..NUM_PROVINCES {
            prov_graph[p] |= army_adj[p];
        }
        let mut lookup: HashMap<String, Prov> = HashMap::new();
        for (i, p) in provinces.iter().enumerate() {
            lookup.insert(p.abbr.clone(), i as Prov);
        }
        for (alias, canon) in &raw.aliases.province {
            let p = *lookup
                .get(canon)
                .ok_or_else(|| bad(format!("alias {alias} of unknown {canon}")))?;
            lookup.insert(alias.clone(), p);
        }
        let mut start_units = Vec::new();
        for (pw, us) in &raw.start.units {
            let pw = power(pw)?;
            for u in us {
                let (k, l) = u
                    .split_once(' ')
                    .ok_or_else(|| bad(format!("malformed start unit {u:?}")))?;
                let kind = match k {
                    "A" => UnitKind::Army,
                    "F" => UnitKind::Fleet,
                    _ => return Err(bad(format!("malformed start unit {u:?}"))),
                };
                start_units.push(Unit {
                    power: pw,
                    kind,
                    loc: loc(l)?,
                });
            }
        }
        let mut start_centers = Vec::new();
        for (pw, cs) in &raw.start.centers {
            let pw = power(pw)?;
            for c in cs {
                start_centers.push((loc(c)?, pw));
            }
        }
        let mut short = vec![u8::MAX; 26 * 26 * 26];
        for (name, &p) in &lookup {
            if let Some(i) = short_index(name) {
                short[i] = p;
            }
        }
        let mut order: Vec<usize> = (0..loc_names.len()).collect();
        order.sort_by(|&a, &b| loc_names[a].cmp(&loc_names[b]));
        let mut loc_rank = vec![0u8; loc_names.len()];
        for (rank, &l) in order.iter().enumerate() {
            loc_rank[l] = rank as u8;
        }
        Ok(Map {
            short,
            loc_rank,
            provinces,
            loc_names,
            loc_prov,
            army_adj,
            fleet_adj,
            fleet_adj_prov,
            sea_nbrs,
            prov_graph,
            seas,
            lookup,
            start_units,
            start_centers,
        })
    }

    /// Number of locations (provinces plus coasts).
    pub fn num_locations(&self) -> usize {
        self.loc_names.len()
    }

    /// Canonical name of a location (`PAR`, `STP/NC`).
    pub fn loc_name(&self, l: Loc) -> &str {
        &self.loc_names[l as usize]
    }

    /// Canonical abbreviation of a province.
    pub fn prov_name(&self, p: Prov) -> &str {
        &self.provinces[p as usize].abbr
    }

    /// Province of a location.
    #[inline]
    pub fn prov_of(&self, l: Loc) -> Prov {
        self.loc_prov[l as usize]
    }

    /// Province by canonical name or alias, upper case.
    pub fn province(&self, upper: &str) -> Option<Prov> {
        match short_index(upper) {
            Some(i) => match self.short[i] {
                u8::MAX => None,
                p => Some(p),
            },
            None => self.lookup.get(upper).copied(),
        }
    }

    /// Province by a name of three upper-case letters (canonical or alias); `None` for
    /// anything else.
    #[inline]
    pub fn province_code(&self, name: [u8; 3]) -> Option<Prov> {
        if !name.iter().all(u8::is_ascii_uppercase) {
            return None;
        }
        let [a, b, c] = name.map(|x| (x - b'A') as usize);
        match self.short[(a * 26 + b) * 26 + c] {
            u8::MAX => None,
            p => Some(p),
        }
    }

    /// Rank of a location's canonical name in ascending byte order (sorts like the names).
    #[inline]
    pub fn loc_rank(&self, l: Loc) -> u8 {
        self.loc_rank[l as usize]
    }

    /// Location by canonical name (`STP/NC`, `PAR`), upper case, aliases allowed for the province.
    pub fn location(&self, upper: &str) -> Option<Loc> {
        match upper.split_once('/') {
            None => self.province(upper),
            Some((p, c)) => {
                let p = self.province(p)?;
                self.coast_of(p, c)
            }
        }
    }

    /// The coast location `c` (`NC`, `SC`, `EC`) of province `p`, if it has it.
    pub fn coast_of(&self, p: Prov, c: &str) -> Option<Loc> {
        self.provinces[p as usize]
            .coasts
            .iter()
            .copied()
            .find(|&l| {
                self.loc_names[l as usize].ends_with(c)
                    && self.loc_names[l as usize].len() == 4 + c.len()
            })
    }

    /// Kind of a province.
    #[inline]
    pub fn kind(&self, p: Prov) -> ProvinceKind {
        self.provinces[p as usize].kind
    }

    /// Whether the province has split coasts.
    #[inline]
    pub fn is_split(&self, p: Prov) -> bool {
        !self.provinces[p as usize].coasts.is_empty()
    }

    /// Provinces an army in `p` can move to without convoy.
    #[inline]
    pub fn army_adj(&self, p: Prov) -> u128 {
        self.army_adj[p as usize]
    }

    /// Locations a fleet at `l` can move to.
    #[inline]
    pub fn fleet_adj(&self, l: Loc) -> u128 {
        self.fleet_adj[l as usize]
    }

    /// Provinces a fleet at `l` can move to.
    #[inline]
    pub fn fleet_adj_prov(&self, l: Loc) -> u128 {
        self.fleet_adj_prov[l as usize]
    }

    /// Sea provinces touching province `p` (either coast of a split province).
    #[inline]
    pub fn sea_nbrs(&self, p: Prov) -> u128 {
        self.sea_nbrs[p as usize]
    }

    /// Provinces bordering `p` by any adjacency (the 2023 rulebook's "absolute adjacency").
    #[inline]
    pub fn prov_graph(&self, p: Prov) -> u128 {
        self.prov_graph[p as usize]
    }

    /// All sea provinces.
    #[inline]
    pub fn seas(&self) -> u128 {
        self.seas
    }

    /// Whether `kind` may stand at `l` (armies on land provinces, fleets on seas, non-split coasts
    /// and coasts).
    pub fn can_stand(&self, kind: UnitKind, l: Loc) -> bool {
        let p = self.prov_of(l);
        let pk = self.kind(p);
        match kind {
            UnitKind::Army => l == p && pk != ProvinceKind::Sea,
            UnitKind::Fleet => pk != ProvinceKind::Land && (l != p || !self.is_split(p)),
        }
    }

    /// Canonical text of a unit (`A PAR`, `F STP/SC`).
    pub fn unit_name(&self, u: &Unit) -> String {
        format!("{} {}", u.kind.letter(), self.loc_name(u.loc))
    }

    /// Whether `p` is a supply centre.
    #[inline]
    pub fn is_sc(&self, p: Prov) -> bool {
        self.provinces[p as usize].supply_center
    }
}

/// The standard map, parsed once from the embedded facts file.
pub fn standard() -> &'static Map {
    static MAP: OnceLock<Map> = OnceLock::new();
    MAP.get_or_init(|| Map::from_json(STANDARD_MAP_JSON).expect("embedded standard map is valid"))
}
