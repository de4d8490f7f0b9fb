//! "Did you mean …?": hcl's `nameSuggestion`, the one suggestion rule of every message.

/// hcl's `nameSuggestion`: the first candidate, in the order given, within Levenshtein
/// distance 2 of `given`. Where hcl's candidates come from a Go map (variables, functions)
/// their order is random in Go; callers pass such names sorted, so the answer is stable.
pub fn suggest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates.into_iter().find(|c| levenshtein(given, c) < 3)
}

/// Orders names that have no order of their own (hcl takes them from a Go map, so Go's
/// suggestion among several close names is random) closest first, then by name: the
/// order [`suggest`] is given for variables and functions.
pub fn closest_first<'a, S: AsRef<str>>(
    given: &str,
    names: &'a mut [S],
) -> impl Iterator<Item = &'a str> {
    names.sort_by_cached_key(|n| (levenshtein(given, n.as_ref()), n.as_ref().to_owned()));
    names.iter().map(|n| n.as_ref())
}

/// Levenshtein distance over characters.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j + 1] + 1).min(cur[j] + 1).min(prev[j] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance() {
        assert_eq!(levenshtein("resourse", "resource"), 1);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("é", "e"), 1);
    }

    #[test]
    fn first_in_order_within_two() {
        assert_eq!(
            suggest("resourse", ["locals", "resource"]),
            Some("resource")
        );
        // hcl takes the first close name, not the closest.
        assert_eq!(
            suggest("resourcess", ["resource", "resources"]),
            Some("resource")
        );
        assert_eq!(suggest("xyzzy", ["locals"]), None);
        assert_eq!(suggest("abc", []), None);
    }

    #[test]
    fn unordered_names_closest_first() {
        let mut names = ["trim", "try", "tolist"];
        assert_eq!(
            suggest("tryy", closest_first("tryy", &mut names)),
            Some("try")
        );
        let mut names = vec!["names".to_string(), "name".to_string()];
        assert_eq!(
            suggest("nmae", closest_first("nmae", &mut names)),
            Some("name")
        );
    }
}
