//! Execution mode and the switches of lance-csr's rules: read by the session, the optimizer
//! rules, the operators' planner and the scan statistics, so they live below all of them.

use crate::error::{Error, Result};

/// How hops execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Mode {
    /// On CSR indexes where the graph has them (the default).
    #[default]
    Csr,
    /// As joins, with every rule of ours off: the relational reference path.
    Join,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "csr" => Ok(Mode::Csr),
            "join" => Ok(Mode::Join),
            other => Err(format!("unknown mode '{other}' (csr or join)")),
        }
    }
}

/// One of the rules `RuleSwitches` switches (`--disable` takes their snake_case names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    PushCsrTargetFilters,
    PruneCsrTargetColumns,
    Reroot,
    MergeMatches,
    VarLengthDistinctEnds,
    FactorizeCounts,
    IntersectCycles,
    FoldConstants,
    AbsorbLimits,
    KeyStatistics,
    ShareSubplans,
    PruneSharedSubplans,
    SearchNearest,
}

impl Rule {
    /// Every rule, in the order of [`RuleSwitches::NAMES`].
    pub const ALL: [Rule; 13] = [
        Rule::PushCsrTargetFilters,
        Rule::PruneCsrTargetColumns,
        Rule::Reroot,
        Rule::MergeMatches,
        Rule::VarLengthDistinctEnds,
        Rule::FactorizeCounts,
        Rule::IntersectCycles,
        Rule::FoldConstants,
        Rule::AbsorbLimits,
        Rule::KeyStatistics,
        Rule::ShareSubplans,
        Rule::PruneSharedSubplans,
        Rule::SearchNearest,
    ];

    /// Its snake_case name (what `--disable` takes).
    pub fn name(self) -> &'static str {
        let i = Rule::ALL.iter().position(|r| *r == self).expect("listed");
        RuleSwitches::NAMES[i]
    }
}

impl std::str::FromStr for Rule {
    type Err = Error;
    fn from_str(name: &str) -> Result<Self> {
        Rule::ALL
            .into_iter()
            .find(|r| r.name() == name)
            .ok_or_else(|| {
                Error::Other(format!(
                    "unknown rule `{name}` (rules: {})",
                    RuleSwitches::NAMES.join(", ")
                ))
            })
    }
}

impl Mode {
    /// `csr` or `join`, as `--mode` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Csr => "csr",
            Mode::Join => "join",
        }
    }
}

/// Switches for lance-csr's optimizer rules (all on by default; off in join mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleSwitches {
    pub push_csr_target_filters: bool,
    pub prune_csr_target_columns: bool,
    /// Graph rewrite: start each MATCH at its most selective node.
    pub reroot: bool,
    /// Graph rewrite: consecutive MATCH clauses planned as one pattern (one join problem),
    /// relationship uniqueness kept per clause.
    pub merge_matches: bool,
    /// Traverse breadth-first when only distinct end nodes are needed.
    pub var_length_distinct_ends: bool,
    /// Compute `count(*)` of hop chains from per-node counts.
    pub factorize_counts: bool,
    /// Find the node closing a cycle by intersecting sorted neighbour lists.
    pub intersect_cycles: bool,
    /// Fold literals and operand-preserving identities (also inside the graph operators).
    pub fold_constants: bool,
    /// A LIMIT without ORDER BY stops expansions and traversals early.
    pub absorb_limits: bool,
    /// Scans report distinct counts of keys and endpoints (`KeyStatisticsProvider`), for
    /// DataFusion's join estimates.
    pub key_statistics: bool,
    /// Identical subplans (the anchor repeated in every branch) are evaluated once.
    pub share_subplans: bool,
    /// A shared subplan computes only the columns its readers use.
    pub prune_shared_subplans: bool,
    /// The rows nearest a constant vector found by Lance's vector search.
    pub search_nearest: bool,
}

impl RuleSwitches {
    /// The switch names, as `disable` takes them.
    pub const NAMES: &'static [&'static str] = &[
        "push_csr_target_filters",
        "prune_csr_target_columns",
        "reroot",
        "merge_matches",
        "var_length_distinct_ends",
        "factorize_counts",
        "intersect_cycles",
        "fold_constants",
        "absorb_limits",
        "key_statistics",
        "share_subplans",
        "prune_shared_subplans",
        "search_nearest",
    ];

    /// Switches one rule off by name.
    pub fn disable(&mut self, name: &str) -> Result<()> {
        self.switch_off(name.parse()?);
        Ok(())
    }

    /// Switches `rule` off.
    pub fn switch_off(&mut self, rule: Rule) {
        let slot = match rule {
            Rule::PushCsrTargetFilters => &mut self.push_csr_target_filters,
            Rule::PruneCsrTargetColumns => &mut self.prune_csr_target_columns,
            Rule::Reroot => &mut self.reroot,
            Rule::MergeMatches => &mut self.merge_matches,
            Rule::VarLengthDistinctEnds => &mut self.var_length_distinct_ends,
            Rule::FactorizeCounts => &mut self.factorize_counts,
            Rule::IntersectCycles => &mut self.intersect_cycles,
            Rule::FoldConstants => &mut self.fold_constants,
            Rule::AbsorbLimits => &mut self.absorb_limits,
            Rule::KeyStatistics => &mut self.key_statistics,
            Rule::ShareSubplans => &mut self.share_subplans,
            Rule::PruneSharedSubplans => &mut self.prune_shared_subplans,
            Rule::SearchNearest => &mut self.search_nearest,
        };
        *slot = false;
    }

    /// Every rule and rewrite off (what `Mode::Join` runs, minus the indexes).
    pub fn none() -> Self {
        Self {
            push_csr_target_filters: false,
            prune_csr_target_columns: false,
            reroot: false,
            merge_matches: false,
            var_length_distinct_ends: false,
            factorize_counts: false,
            intersect_cycles: false,
            fold_constants: false,
            absorb_limits: false,
            key_statistics: false,
            share_subplans: false,
            prune_shared_subplans: false,
            search_nearest: false,
        }
    }
}

impl Default for RuleSwitches {
    fn default() -> Self {
        Self {
            push_csr_target_filters: true,
            prune_csr_target_columns: true,
            reroot: true,
            merge_matches: true,
            var_length_distinct_ends: true,
            factorize_counts: true,
            intersect_cycles: true,
            fold_constants: true,
            absorb_limits: true,
            key_statistics: true,
            share_subplans: true,
            prune_shared_subplans: true,
            search_nearest: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_its_name_and_switch() {
        let names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(names, RuleSwitches::NAMES);
        for r in Rule::ALL {
            assert_eq!(r.name().parse::<Rule>().unwrap(), r);
            let mut s = RuleSwitches::default();
            s.switch_off(r);
            assert_ne!(s, RuleSwitches::default(), "{r:?}");
        }
        let e = "push".parse::<Rule>().unwrap_err().to_string();
        assert!(e.contains("unknown rule `push`"), "{e}");
    }
}
