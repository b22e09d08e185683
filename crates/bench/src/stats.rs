//! Percentiles, medians and the formatting every table shares.

use std::time::Duration;

/// The distribution of one series of latencies.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub n: usize,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
}

impl Summary {
    /// A table row: label, sample count, p50, p99, max.
    pub fn row(label: &str, summary: &Summary) -> Vec<String> {
        vec![
            label.into(),
            summary.n.to_string(),
            ms(summary.p50),
            ms(summary.p99),
            ms(summary.max),
        ]
    }

    /// Summarises `samples` (which must not be empty).
    pub fn of(samples: &[Duration]) -> Summary {
        assert!(!samples.is_empty(), "no samples to summarise");
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        Summary {
            n: sorted.len(),
            p50: percentile(&sorted, 50.0),
            p99: percentile(&sorted, 99.0),
            max: sorted[sorted.len() - 1],
        }
    }
}

/// Nearest-rank percentile of sorted samples: the smallest sample at or above `p` percent
/// of all samples. p99 of 1,000 samples is the 990th smallest.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    assert!(!sorted.is_empty(), "no samples");
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The median of unsorted samples (the lower middle one for an even count).
pub fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    sorted[(sorted.len() - 1) / 2]
}

/// A duration in milliseconds with three decimals (microsecond resolution).
pub fn ms(duration: Duration) -> String {
    format!("{:.3} ms", duration.as_secs_f64() * 1e3)
}

/// Items per second.
pub fn per_second(count: usize, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64()
}

/// An integer-ish number with thousands separators.
pub fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `a / b` as a ratio like `1.42x`.
pub fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

pub fn verdict(met: bool) -> &'static str {
    if met {
        "**met**"
    } else {
        "**NOT met**"
    }
}

/// Prints a markdown table.
pub fn table(headers: &[&str], rows: &[Vec<String>]) {
    println!("| {} |", headers.join(" | "));
    println!(
        "|{}",
        headers.iter().map(|_| "---|").collect::<Vec<_>>().concat()
    );
    for row in rows {
        println!("| {} |", row.join(" | "));
    }
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms_list(values: &[u64]) -> Vec<Duration> {
        values.iter().map(|&v| Duration::from_millis(v)).collect()
    }

    #[test]
    fn nearest_rank_percentiles() {
        let sorted = ms_list(&(1..=1000).collect::<Vec<_>>());
        assert_eq!(percentile(&sorted, 50.0), Duration::from_millis(500));
        assert_eq!(percentile(&sorted, 99.0), Duration::from_millis(990));
        assert_eq!(percentile(&sorted, 100.0), Duration::from_millis(1000));
        assert_eq!(percentile(&ms_list(&[7]), 99.0), Duration::from_millis(7));
    }

    #[test]
    fn summary_and_median() {
        let summary = Summary::of(&ms_list(&[5, 1, 3, 2, 4]));
        assert_eq!(summary.p50, Duration::from_millis(3));
        assert_eq!(summary.max, Duration::from_millis(5));
        assert_eq!(median(&ms_list(&[4, 1, 3, 2])), Duration::from_millis(2));
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(1234567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1000.0), "1,000");
    }
}
