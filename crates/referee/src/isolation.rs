//! What a match's process seats may not see: the files the caller writes about the match (its
//! replay, its viewer page) and what the other seats are given (their programs, their folders).

use std::collections::BTreeMap;

use kakehiki_agent::{check_mounts, DeniedPath};
use kakehiki_core::SeatSpec;

use crate::driver::{MatchSpec, RefereeError};

impl MatchSpec {
    /// Refuse, before the match, a seat whose sandbox would show it one of `outputs` (what the
    /// caller writes about this match: its replay, its viewer page) or what another seat is
    /// given (its program, its folder); then every bot's sandbox refuses the outputs too.
    pub fn deny_outputs_and_other_seats(
        &mut self,
        outputs: impl IntoIterator<Item = DeniedPath>,
    ) -> Result<(), RefereeError> {
        self.sandbox.jail.denied.extend(outputs);
        let commands: Vec<(usize, &Vec<String>)> = self
            .seats
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match s {
                SeatSpec::Cmd(argv) | SeatSpec::TcpCmd(argv) | SeatSpec::Daide(Some(argv)) => {
                    Some((i, argv))
                }
                _ => None,
            })
            .collect();
        let refused = |seat: usize| move |source| RefereeError::SeatRefused { seat, source };
        // What each seat is shown, with only the outputs denied.
        let mut shown = BTreeMap::new();
        for &(i, argv) in &commands {
            let mounts = check_mounts(argv, &self.sandbox.for_seat(i)).map_err(refused(i))?;
            shown.insert(i, mounts);
        }
        for &(i, argv) in &commands {
            let mut cfg = self.sandbox.for_seat(i);
            for (&j, theirs) in &shown {
                for p in theirs.iter().filter(|p| j != i && !shown[&i].contains(p)) {
                    cfg.jail.denied.push(DeniedPath::new(
                        p,
                        format!("what seat {j} is given (its program or folder)"),
                    ));
                }
            }
            check_mounts(argv, &cfg).map_err(refused(i))?;
        }
        Ok(())
    }
}
