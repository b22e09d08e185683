//! A line diff of an edit's old text against its new text, in unified-diff notation, so the
//! operator sees at a glance what an Edit changes. Edits replace short snippets, so a plain
//! longest-common-subsequence table is fast enough; past `MAX_CELLS` the diff is the old
//! lines removed and the new ones added, which is still correct, only less tidy.

/// Beyond this many table cells (old lines × new lines) the diff is not minimised.
const MAX_CELLS: usize = 250_000;

/// The diff body: one line per old or new line, each starting with ' ', '-' or '+'.
pub fn lines(old: &str, new: &str) -> String {
    let old: Vec<&str> = old.lines().collect();
    let new: Vec<&str> = new.lines().collect();
    let mut out = String::new();
    for (mark, line) in edit_script(&old, &new) {
        out.push(mark);
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn edit_script<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<(char, &'a str)> {
    if old.len().saturating_mul(new.len()) > MAX_CELLS {
        let removed = old.iter().map(|line| ('-', *line));
        return removed.chain(new.iter().map(|line| ('+', *line))).collect();
    }
    // common[i][j]: the longest common subsequence of old[i..] and new[j..].
    let mut common = vec![vec![0usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut script = Vec::with_capacity(old.len() + new.len());
    while i < old.len() && j < new.len() {
        if old[i] == new[j] {
            script.push((' ', old[i]));
            i += 1;
            j += 1;
        } else if common[i + 1][j] >= common[i][j + 1] {
            script.push(('-', old[i]));
            i += 1;
        } else {
            script.push(('+', new[j]));
            j += 1;
        }
    }
    script.extend(old[i..].iter().map(|line| ('-', *line)));
    script.extend(new[j..].iter().map(|line| ('+', *line)));
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_lines_are_context_and_changed_ones_are_marked() {
        let diff = lines("a\nb\nc", "a\nB\nc\nd");
        assert_eq!(diff, " a\n-b\n+B\n c\n+d\n");
    }

    #[test]
    fn an_empty_side_is_all_additions_or_removals() {
        assert_eq!(lines("", "x\ny"), "+x\n+y\n");
        assert_eq!(lines("x", ""), "-x\n");
    }
}
