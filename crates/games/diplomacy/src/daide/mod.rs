//! DAIDE, the Diplomacy AI Development Environment's client-server protocol, as pure functions:
//! tokens ([`token`]), framing ([`frame`]), the parts messages and press share ([`grammar`]),
//! messages as typed values ([`message`]), the names
//! of the standard map and its `MDF` ([`names`]), orders and `ORD` results ([`orders`]), press
//! ([`press`]), and the server side of one player's conversation ([`server`]). No I/O: the referee's DAIDE seats
//! carry the bytes.

pub mod frame;
pub mod grammar;
pub mod message;
pub mod names;
pub mod orders;
pub mod press;
pub mod server;
pub mod token;

pub use frame::{Decoder, ErrorCode, Frame, FrameError};
pub use message::{DLoc, DOrder, DProv, DUnit, Message, MessageError, Turn};
pub use press::{Arrangement, Press};
pub use token::Token;
