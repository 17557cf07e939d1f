//! `kakehiki games`.

use clap::Args;
use kakehiki_referee::GAMES;

use crate::exit;

#[derive(Args, Debug)]
pub struct GamesArgs {
    /// Print the game types as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: GamesArgs) -> anyhow::Result<u8> {
    if args.json {
        let types: Vec<_> = GAMES.iter().map(|g| g.game_type()).collect();
        println!("{}", serde_json::to_string_pretty(&types)?);
        return Ok(exit::OK);
    }
    for g in GAMES {
        let t = g.game_type();
        let seats = if t.min_seats == t.max_seats {
            t.min_seats.to_string()
        } else {
            format!("{}-{}", t.min_seats, t.max_seats)
        };
        println!(
            "{:<14} {} seats, {:?}, rules: {}, bots: {}\n               {}",
            t.name,
            seats,
            t.dynamics,
            t.rule_sets.join("|"),
            t.builtin_bots.join(", "),
            t.title
        );
    }
    Ok(exit::OK)
}
