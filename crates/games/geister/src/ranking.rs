//! ranking
