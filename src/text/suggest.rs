//! "Did you mean …?": hcl's `nameSuggestion`, the one suggestion rule of every message.

/// hcl's `nameSuggestion`: the first candidate, in the order given, within Levenshtein
/// distance 2 of `given`. Where hcl's candidates come from a Go map (variables, functions)
/// their order is random in Go; callers pass such names sorted, so the answer is stable.
///
/// Among more than [`MAX_CANDIDATES`] names there is no suggestion (fn-hcl's own limit):
/// each message would cost as many distance computations as there are names, and a
/// program with as many mistakes as names would cost their square.
pub fn suggest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let few: Vec<&'a str> = candidates.into_iter().take(MAX_CANDIDATES + 1).collect();
    if few.len() > MAX_CANDIDATES {
        return None;
    }
    few.into_iter().find(|c| levenshtein(given, c) < 3)
}

/// The most names [`suggest`] and [`closest_first`] look through for a suggestion.
pub const MAX_CANDIDATES: usize = 1000;

/// Orders names that have no order of their own (hcl takes them from a Go map, so Go's
/// suggestion among several close names is random) closest first, then by name: the
/// order [`suggest`] is given for variables and functions.
pub fn closest_first<'a, S: AsRef<str>>(
    given: &str,
    names: &'a mut [S],
) -> impl Iterator<Item = &'a str> {
    let names = if names.len() > MAX_CANDIDATES {
        // No suggestion among that many (see [`suggest`]): nothing is measured.
        &mut names[..0]
    } else {
        names
    };
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
        // Too many names to look through: no suggestion, even a close one.
        let many: Vec<String> = (0..=MAX_CANDIDATES).map(|i| format!("n{i}")).collect();
        assert_eq!(suggest("n1x", many.iter().map(String::as_str)), None);
        assert_eq!(
            suggest("n1x", many[1..].iter().map(String::as_str)),
            Some("n1")
        );
        let mut names = many.clone();
        assert_eq!(closest_first("n1x", &mut names).next(), None);
        let mut names = many[1..].to_vec();
        assert_eq!(closest_first("n1x", &mut names).next(), Some("n1"));
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
