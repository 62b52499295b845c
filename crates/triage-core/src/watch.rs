//! Byte watermarks on the peer's messages: the application asks to learn when the first N
//! bytes of a message have been delivered in order, and the connection raises
//! [`crate::Event::MessageBytes`] once they have.
//!
//! A browser's HTML parser and preload scanner work on a document as it streams in (the
//! WHATWG HTML standard, §13.2 "Parsing HTML documents": the tokenizer consumes the input
//! stream as bytes arrive): a page client that requests a child when the bytes of its parent
//! up to the child's place have arrived needs exactly this signal, and only for a handful of
//! messages. So it is opt-in per message: with no watch registered the receive path does one
//! `is_empty` test per delivered chunk and nothing else (no allocation, no lookup).
//!
//! Both framing modes keep one [`Watches`]: TCP mode counts a message's bytes as its chunks
//! are delivered in order on the byte stream (behind any message before it, head-of-line
//! blocking included); QUIC mode counts the bytes of the message's stream readable in order
//! (a stream per object: no blocking behind other streams). DATAGRAM messages have no
//! in-order bytes and never raise the event.

use std::collections::BTreeMap;

/// Pending watermarks, by message id: one per message (registering again replaces it).
/// A `BTreeMap` so that watermarks reached by one packet fire in message-id order, whatever
/// order they were registered in.
#[derive(Clone, Debug, Default)]
pub struct Watches {
    by_msg: BTreeMap<u32, u64>,
}

impl Watches {
    /// True when no watermark is pending: the receive path skips every other call.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.by_msg.is_empty()
    }

    /// Registers (or replaces) message `msg_id`'s watermark of `bytes`, when `delivered`
    /// bytes of it have arrived so far: returns `Some(delivered)` when the watermark is
    /// already reached (the caller raises the event at once; nothing stays registered).
    pub fn register(&mut self, msg_id: u32, bytes: u64, delivered: u64) -> Option<u64> {
        if delivered >= bytes {
            self.by_msg.remove(&msg_id);
            return Some(delivered);
        }
        self.by_msg.insert(msg_id, bytes);
        None
    }

    /// `delivered` bytes of message `msg_id` have now arrived in order: `Some(delivered)`
    /// when that reaches its watermark, which is then removed (a watermark fires once).
    #[inline]
    pub fn reached(&mut self, msg_id: u32, delivered: u64) -> Option<u64> {
        match self.by_msg.get(&msg_id) {
            Some(&w) if delivered >= w => {
                self.by_msg.remove(&msg_id);
                Some(delivered)
            }
            _ => None,
        }
    }

    /// Forgets message `msg_id`'s watermark (the message is complete: a watermark beyond its
    /// length can never be reached).
    pub fn forget(&mut self, msg_id: u32) {
        self.by_msg.remove(&msg_id);
    }

    /// The watched message ids and their watermarks, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.by_msg.iter().map(|(&m, &b)| (m, b))
    }
}

#[cfg(test)]
mod tests {
    use super::Watches;

    #[test]
    fn a_watermark_fires_once_when_reached_and_is_replaced_by_a_new_one() {
        let mut w = Watches::default();
        assert!(w.is_empty());
        assert_eq!(w.register(7, 1000, 0), None);
        assert!(!w.is_empty());
        assert_eq!(w.reached(7, 999), None);
        assert_eq!(w.reached(8, 5000), None, "another message");
        assert_eq!(w.reached(7, 1448), Some(1448));
        assert!(w.is_empty());
        assert_eq!(w.reached(7, 2896), None, "fires once");
        // Already reached at registration: reported at once, nothing kept.
        assert_eq!(w.register(7, 2000, 2896), Some(2896));
        assert!(w.is_empty());
        // Replacing: the later watermark is the one that counts.
        assert_eq!(w.register(9, 100, 0), None);
        assert_eq!(w.register(9, 300, 0), None);
        assert_eq!(w.reached(9, 200), None);
        assert_eq!(w.reached(9, 300), Some(300));
        assert_eq!(w.register(3, 10, 0), None);
        w.forget(3);
        assert!(w.is_empty());
    }
}
