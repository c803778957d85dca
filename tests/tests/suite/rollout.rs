//! The rollout's hash over a million user ids, sequential and random: the share of users on
//! the new kind is the share asked for, within five standard deviations, at every step of a
//! ramp; and the users spread evenly over a thousand buckets (a chi-square test). Sequential
//! ids are what an app's user ids often are; a hash biased by them would move one block of
//! users (and its key range) first.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sharded_runtime::rollout::{Rollout, WHOLE};

const USERS: usize = 1_000_000;

fn check(label: &str, ids: &[String]) {
    let rollout = Rollout::new("orders-to-orders-v2", 0).unwrap();
    let buckets: Vec<u32> = ids.iter().map(|id| rollout.bucket(id)).collect();
    for share in [100, 1_000, 10_000, 100_000, 500_000, 900_000] {
        let on_new = buckets.iter().filter(|bucket| **bucket < share).count() as f64;
        let p = share as f64 / WHOLE as f64;
        let n = USERS as f64;
        let sigma = (n * p * (1.0 - p)).sqrt();
        let deviation = (on_new - n * p) / sigma;
        println!("{label}: share {p}: {on_new} users on the new kind, {deviation:+.2} σ");
        assert!(deviation.abs() < 5.0, "{label}: share {p}: {deviation} σ");
    }
    // A thousand buckets of a thousandth each: chi-square with 999 degrees of freedom has
    // mean 999 and standard deviation 44.7; six of them above is one chance in a billion.
    let mut counts = vec![0u64; 1000];
    for bucket in &buckets {
        counts[(*bucket / 1000) as usize] += 1;
    }
    let expected = USERS as f64 / 1000.0;
    let chi_square: f64 = counts
        .iter()
        .map(|count| (*count as f64 - expected).powi(2) / expected)
        .sum();
    println!("{label}: chi-square over 1000 buckets {chi_square:.1} (999 expected)");
    assert!(chi_square < 999.0 + 6.0 * 44.7, "{label}: {chi_square}");
}

#[test]
fn the_rollout_hash_is_unbiased_over_a_million_ids() {
    let sequential: Vec<String> = (0..USERS).map(|i| format!("user-{i:07}")).collect();
    check("sequential ids", &sequential);
    let numeric: Vec<String> = (0..USERS)
        .map(|i| (1_000_000_000 + i).to_string())
        .collect();
    check("sequential numbers", &numeric);
    let mut rng = StdRng::seed_from_u64(7);
    let random: Vec<String> = (0..USERS)
        .map(|_| {
            (0..20)
                .map(|_| char::from(b'a' + rng.random_range(0..26)))
                .collect()
        })
        .collect();
    check("random ids", &random);
}
