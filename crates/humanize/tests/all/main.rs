//! What a person reads, checked as text: grouping, currency, spans, relative
//! and absolute times across a day boundary, a year and time zones.

mod numbers;
mod times;
