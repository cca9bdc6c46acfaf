//! Which way a change in OANP terms goes, read from the buyer's side (the
//! arbiter scores both sides; a console shows one person which way each
//! term moved). One rule per term, here only: the console never guesses
//! a direction from a field's name.

use rust_decimal::Decimal;

/// What a change means for the buyer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The buyer is better off.
    Better,
    /// The buyer is worse off.
    Worse,
}

/// A price that goes down (a negative `new − old`) is better for the
/// buyer, up is worse, no move is neither.
pub fn price_effect(delta: Decimal) -> Option<Effect> {
    if delta.is_sign_negative() && !delta.is_zero() {
        Some(Effect::Better)
    } else if delta.is_zero() {
        None
    } else {
        Some(Effect::Worse)
    }
}

/// An inclusion (`warranty`, `cable`) the new terms add is better for the
/// buyer, one they drop is worse: the price buys more or less.
pub fn inclusion_effect(added: bool) -> Effect {
    if added {
        Effect::Better
    } else {
        Effect::Worse
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lower_price_is_better_for_the_buyer_a_higher_worse_none_is_neither() {
        assert_eq!(price_effect(Decimal::new(-1100, 2)), Some(Effect::Better));
        assert_eq!(price_effect(Decimal::new(36_000, 0)), Some(Effect::Worse));
        assert_eq!(price_effect(Decimal::ZERO), None);
        assert_eq!(price_effect(-Decimal::ZERO), None);
    }

    #[test]
    fn an_added_inclusion_is_better_for_the_buyer_a_dropped_one_worse() {
        assert_eq!(inclusion_effect(true), Effect::Better);
        assert_eq!(inclusion_effect(false), Effect::Worse);
    }
}
