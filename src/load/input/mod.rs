//! The byte sources of a load and how their bytes reach the reader: the file, value or client
//! stream (`source.rs`; the COPY-in protocol in `client.rs`, a plain connection's socket read
//! by a thread of its own in `socket.rs`), the backend's side of the byte stream to the reader
//! thread (`pump.rs`), the input's encoding (`encoding.rs`), and the row blocks decoded inline
//! or by the reader thread (`blocks.rs`).

pub(in crate::load) mod blocks;
pub(in crate::load) mod client;
pub mod encoding;
pub(in crate::load) mod pump;
pub(in crate::load) mod socket;
pub(in crate::load) mod source;
