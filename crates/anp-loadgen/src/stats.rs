//! Latency percentiles and rates, computed exactly from every sample.

use std::time::Duration;

/// Nearest-rank percentile (`p` in 0..=100) of sorted samples.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Events per second over `elapsed`.
pub fn rate(count: usize, elapsed: Duration) -> f64 {
    if elapsed.is_zero() {
        0.0
    } else {
        count as f64 / elapsed.as_secs_f64()
    }
}

/// `rate` over the baseline's `base`, or 0 when there is no baseline.
pub fn ratio(rate: f64, base: f64) -> f64 {
    if base > 0.0 {
        rate / base
    } else {
        0.0
    }
}

/// What every report prints of one load.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    /// Acknowledged appends.
    pub appends: usize,
    /// Appends per second.
    pub per_second: f64,
    /// Median latency, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Slowest, ms.
    pub max_ms: f64,
}

/// The figures of `sorted` latencies over `elapsed`.
pub fn figures(sorted: &[Duration], elapsed: Duration) -> Figures {
    Figures {
        appends: sorted.len(),
        per_second: rate(sorted.len(), elapsed),
        p50_ms: ms(percentile(sorted, 50.0)),
        p99_ms: ms(percentile(sorted, 99.0)),
        max_ms: ms(sorted.last().copied().unwrap_or_default()),
    }
}

/// Milliseconds with two decimals, for printing.
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 100_000.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        assert_eq!(percentile(&samples, 50.0), Duration::from_millis(50));
        assert_eq!(percentile(&samples, 99.0), Duration::from_millis(99));
        assert_eq!(percentile(&samples, 100.0), Duration::from_millis(100));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
        assert_eq!(rate(500, Duration::from_millis(250)), 2000.0);
        assert_eq!(ratio(300.0, 1000.0), 0.3);
        assert_eq!(ratio(300.0, 0.0), 0.0);
    }
}
