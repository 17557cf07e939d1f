//! Contests: definitions, formats, scheduling, running, standings and ratings.
