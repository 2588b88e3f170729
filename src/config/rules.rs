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

/// Declares every rule once: its variant in [`Rule`], its switch in [`RuleSwitches`] (the
/// snake_case name `--disable` takes) and what it does.
macro_rules! rules {
    ($($(#[$doc:meta])* $variant:ident => $field:ident,)*) => {
        /// One of the rules `RuleSwitches` switches (`--disable` takes their snake_case names).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum Rule {
            $($variant,)*
        }

        impl Rule {
            /// Every rule, in the order of [`RuleSwitches::NAMES`].
            pub const ALL: [Rule; [$(stringify!($variant)),*].len()] = [$(Rule::$variant,)*];

            /// Its snake_case name (what `--disable` takes).
            pub fn name(self) -> &'static str {
                match self {
                    $(Rule::$variant => stringify!($field),)*
                }
            }
        }

        /// Switches for lance-csr's optimizer rules (all on by default; off in join mode).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct RuleSwitches {
            $($(#[$doc])* pub $field: bool,)*
        }

        impl RuleSwitches {
            /// The switch names, as `disable` takes them.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field),)*];

            /// Switches `rule` off.
            pub fn switch_off(&mut self, rule: Rule) {
                match rule {
                    $(Rule::$variant => self.$field = false,)*
                }
            }

            /// Every switch `on`, or every one off.
            fn all(on: bool) -> Self {
                Self {
                    $($field: on,)*
                }
            }
        }
    };
}

rules! {
    /// Filters on a hop's far node and relationship evaluated inside the hop.
    PushCsrTargetFilters => push_csr_target_filters,
    /// A hop takes only the far columns used above it.
    PruneCsrTargetColumns => prune_csr_target_columns,
    /// Graph rewrite: start each MATCH at its most selective node.
    Reroot => reroot,
    /// Graph rewrite: consecutive MATCH clauses planned as one pattern (one join problem),
    /// relationship uniqueness kept per clause.
    MergeMatches => merge_matches,
    /// Traverse breadth-first when only distinct end nodes are needed.
    VarLengthDistinctEnds => var_length_distinct_ends,
    /// A filter keeping one label of a branched variable reads that label's branch alone.
    SelectLabelBranch => select_label_branch,
    /// Compute `count(*)` of hop chains from per-node counts.
    FactorizeCounts => factorize_counts,
    /// Find the node closing a cycle by intersecting sorted neighbour lists.
    IntersectCycles => intersect_cycles,
    /// Fold literals and operand-preserving identities (also inside the graph operators).
    FoldConstants => fold_constants,
    /// A LIMIT without ORDER BY stops expansions and traversals early.
    AbsorbLimits => absorb_limits,
    /// Scans report distinct counts of keys and endpoints (`KeyStatisticsProvider`), for
    /// DataFusion's join estimates.
    KeyStatistics => key_statistics,
    /// Identical subplans (the anchor repeated in every branch) are evaluated once.
    ShareSubplans => share_subplans,
    /// A shared subplan computes only the columns its readers use.
    PruneSharedSubplans => prune_shared_subplans,
    /// The rows nearest a constant vector found by Lance's vector search.
    SearchNearest => search_nearest,
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

impl RuleSwitches {
    /// Switches one rule off by name.
    pub fn disable(&mut self, name: &str) -> Result<()> {
        self.switch_off(name.parse()?);
        Ok(())
    }

    /// Every rule and rewrite off (what `Mode::Join` runs, minus the indexes).
    pub fn none() -> Self {
        Self::all(false)
    }
}

impl Default for RuleSwitches {
    fn default() -> Self {
        Self::all(true)
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
