//! The regimes a run can be launched as, in one table: the web page's form (`serve`), the
//! check that a launch's arguments parse, and `sweep`'s plan all read it, so a regime, its own
//! flags and whether it runs Vanilla are declared once.

use clap::Args as _;

use crate::commands::{
    action_feedback, feedback_usefulness, off_policy, on_policy, stepwise, train_performance,
};

/// One of a regime's own flags (`--batch-size`), shown only for that regime.
pub(crate) struct Field {
    /// The flag without its dashes.
    pub name: &'static str,
    /// What the page calls it.
    pub label: &'static str,
    /// Its values.
    pub kind: FieldKind,
}

/// The values a regime's flag takes.
pub(crate) enum FieldKind {
    /// A whole number in `min..=max`.
    Number {
        /// Smallest.
        min: i64,
        /// Largest.
        max: i64,
        /// The command's default.
        default: i64,
    },
    /// One of `options`.
    Choice {
        /// The values.
        options: &'static [&'static str],
        /// The command's default (the page's first choice where the flag is required).
        default: &'static str,
    },
}

/// How `sweep --regimes` names a regime.
pub(crate) enum Swept {
    /// By its command's name.
    AsItself,
    /// Once per option of its choice flag, as `<command>-<option>` running `<command>
    /// --<flag> <option>` (upstream's action-feedback script runs each action).
    PerOption(&'static str),
    /// Not at all: its results are not runs that `report` compares.
    Never,
}

/// A regime command.
pub(crate) struct Regime {
    /// Its subcommand.
    pub id: &'static str,
    /// What the page calls it.
    pub label: &'static str,
    /// Whether the page and sweeps offer it with a memoryless system (Vanilla).
    pub memoryless: bool,
    /// Its own flags.
    pub fields: &'static [Field],
    /// Its subcommand's arguments, to check that a launch parses as the launched process
    /// will parse it.
    pub arguments: fn(clap::Command) -> clap::Command,
    /// How sweeps name it.
    pub swept: Swept,
}

/// A name `sweep --regimes` takes.
pub(crate) struct SweptRegime {
    /// The name (`on-policy`, `action-feedback-like`).
    pub name: String,
    /// The words of its command line after `mb-harness`.
    pub words: Vec<String>,
    /// Its regime.
    pub regime: &'static Regime,
}

impl Regime {
    /// Every regime, in the table's order.
    pub(crate) fn all() -> &'static [Regime] {
        REGIMES
    }

    /// The regime of subcommand `id`.
    pub(crate) fn named(id: &str) -> Option<&'static Regime> {
        REGIMES.iter().find(|r| r.id == id)
    }

    /// Every name `sweep --regimes` takes, in the table's order.
    pub(crate) fn swept() -> Vec<SweptRegime> {
        let mut names = Vec::new();
        for regime in REGIMES {
            match regime.swept {
                Swept::AsItself => names.push(SweptRegime {
                    name: regime.id.to_string(),
                    words: vec![regime.id.to_string()],
                    regime,
                }),
                Swept::PerOption(flag) => {
                    let options = regime.fields.iter().find_map(|f| match f.kind {
                        FieldKind::Choice { options, .. } if f.name == flag => Some(options),
                        _ => None,
                    });
                    for option in options.unwrap_or_default() {
                        names.push(SweptRegime {
                            name: format!("{}-{option}", regime.id),
                            words: vec![regime.id.into(), format!("--{flag}"), option.to_string()],
                            regime,
                        });
                    }
                }
                Swept::Never => {}
            }
        }
        names
    }
}

const fn number(
    name: &'static str,
    label: &'static str,
    min: i64,
    max: i64,
    default: i64,
) -> Field {
    Field {
        name,
        label,
        kind: FieldKind::Number { min, max, default },
    }
}

/// Every regime the harness has, with the flags of its own (and their defaults) as its
/// subcommand declares them.
static REGIMES: &[Regime] = &[
    Regime {
        id: "off-policy",
        label: "Off-policy",
        memoryless: true,
        fields: &[],
        arguments: off_policy::OffPolicyArgs::augment_args,
        swept: Swept::AsItself,
    },
    Regime {
        id: "train-performance",
        label: "Training-set performance",
        memoryless: true,
        fields: &[],
        arguments: train_performance::RunArgs::augment_args,
        swept: Swept::AsItself,
    },
    Regime {
        id: "stepwise-off-policy",
        label: "Stepwise off-policy",
        memoryless: false,
        fields: &[number("batch-size", "Dialogs per step", 1, 1_000_000, 100)],
        arguments: stepwise::StepwiseArgs::augment_args,
        swept: Swept::AsItself,
    },
    Regime {
        id: "on-policy",
        label: "On-policy",
        memoryless: false,
        fields: &[
            number("step", "Steps", 1, 1000, 10),
            number("batch-size", "Training rows per step", 1, 1_000_000, 100),
            number("max-rounds", "Assistant turns per dialog", 1, 100, 3),
            Field {
                name: "feedback-answers",
                label: "Answers to feedback",
                kind: FieldKind::Choice {
                    options: &["discarded", "skipped", "answered"],
                    default: "discarded",
                },
            },
        ],
        arguments: on_policy::OnPolicyArgs::augment_args,
        swept: Swept::AsItself,
    },
    Regime {
        id: "action-feedback",
        label: "Action feedback",
        memoryless: false,
        fields: &[Field {
            name: "action",
            label: "Action",
            kind: FieldKind::Choice {
                options: &["like", "copy"],
                default: "like",
            },
        }],
        arguments: action_feedback::ActionFeedbackArgs::augment_args,
        swept: Swept::PerOption("action"),
    },
    Regime {
        id: "feedback-usefulness",
        label: "Feedback usefulness",
        memoryless: true,
        fields: &[number(
            "sample",
            "Rows per split (-1: all but the last)",
            -1,
            1_000_000_000,
            -1,
        )],
        arguments: feedback_usefulness::FeedbackUsefulnessArgs::augment_args,
        swept: Swept::Never,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The page shows each regime's own flags with the defaults its subcommand declares, and
    /// offers only values the subcommand takes (its bounds and options parse).
    #[test]
    fn the_fields_are_the_subcommands_flags_with_their_defaults() {
        for regime in Regime::all() {
            let command = (regime.arguments)(clap::Command::new("mb-harness"));
            for field in regime.fields {
                let argument = command
                    .get_arguments()
                    .find(|a| a.get_long() == Some(field.name))
                    .unwrap_or_else(|| panic!("{}: no --{}", regime.id, field.name));
                let declared: Vec<String> = argument
                    .get_default_values()
                    .iter()
                    .map(|v| v.to_string_lossy().into_owned())
                    .collect();
                let (shown, values) = match &field.kind {
                    FieldKind::Number { min, max, default } => {
                        (default.to_string(), vec![min.to_string(), max.to_string()])
                    }
                    FieldKind::Choice { options, default } => (
                        default.to_string(),
                        options.iter().map(|o| o.to_string()).collect(),
                    ),
                };
                // A required flag has no default: the page's is only its first choice.
                if !argument.is_required_set() {
                    assert_eq!(
                        declared,
                        std::slice::from_ref(&shown),
                        "{} --{}",
                        regime.id,
                        field.name
                    );
                }
                for value in values.iter().chain([&shown]) {
                    let flag = format!("--{}", field.name);
                    let argv = ["mb-harness", flag.as_str(), value.as_str()];
                    let parsed = (regime.arguments)(clap::Command::new("mb-harness"))
                        .try_get_matches_from(argv);
                    assert!(parsed.is_ok(), "{} {flag} {value}: {parsed:?}", regime.id);
                }
            }
        }
    }

    /// What `sweep --regimes` takes: each regime by its name, action feedback once per action,
    /// feedback usefulness not at all.
    #[test]
    fn sweeps_name_each_regime_and_each_action() {
        let names: Vec<String> = Regime::swept().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "off-policy",
                "train-performance",
                "stepwise-off-policy",
                "on-policy",
                "action-feedback-like",
                "action-feedback-copy",
            ]
        );
        let copy = Regime::swept().pop().unwrap();
        assert_eq!(copy.words, ["action-feedback", "--action", "copy"]);
        assert!(Regime::named("feedback-usefulness").is_some() && Regime::named("x").is_none());
    }
}
