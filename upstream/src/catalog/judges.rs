//! The catalog's rows of the judges that score several datasets' answers: WritingBench's
//! critic, the merged 1–10 judges of JRE-L, JuDGE and IdeaBench, and IdeaBench's rating and
//! ranking of research ideas.

use super::Select::{Assigned, Nth};
use super::{format_row, row, stripped, Entry, LimitAspect, Prompt};
use Prompt::*;

/// WritingBench's critic prompts.
const CRITIC: &str = "src/dataset/writingbench/prompt.py";

/// JRE-L's dataset module.
const JREL: &str = "src/dataset/JRE-L.py";

/// JuDGE's dataset module.
const JUDGE: &str = "src/dataset/JuDGE.py";

/// IdeaBench's dataset module.
const IDEABENCH: &str = "src/dataset/IdeaBench.py";

/// Where JRE-L's merged judge sends its request.
const MERGED_JREL: &str = "JRE_L_Dataset.evaluate_single_only_one_metric";
/// Where JuDGE's merged judge sends its request.
const MERGED_JUDGE: &str = "JuDGE_Dataset.evaluate_single_only_one_metric";
/// Where IdeaBench's merged judge sends its request.
const MERGED_IDEABENCH: &str = "IdeaBench_Dataset.evaluate_single_only_one_metric";

/// Where IdeaBench builds its ranking request.
const RANKING: &str = "IdeaBench_Dataset._get_llm_ranking";

/// LimitGen's dataset module.
const LIMITGEN: &str = "src/dataset/LimitGen.py";

/// Where LimitGen builds its aspect check.
const ASPECT_CHECK: &str = "prepare_aspect_check_message";

/// Where LimitGen builds its subtype classification.
const SUBTYPES: &str = "prepare_subtype_classification_message";

/// Every judge prompt, where it stands and its hash.
pub(super) static JUDGE_ROWS: &[Entry] = &[
    stripped(row(
        CriticSystem,
        "writingbench.critic.system",
        CRITIC,
        "",
        Assigned("evaluate_system", 0),
        "e7bb6e4ab5ab2734",
    )),
    stripped(format_row(
        CriticUser,
        "writingbench.critic.user",
        CRITIC,
        "",
        Assigned("evaluate_prompt", 0),
        "6a18ad98a8fc5db2",
    )),
    format_row(
        MergedJreL,
        "jre_l.merged.user",
        JREL,
        "",
        Assigned("merge_score_prompt", 0),
        "a667670dd063351e",
    ),
    row(
        MergedJreLSystem,
        "jre_l.merged.system",
        JREL,
        MERGED_JREL,
        Nth(17),
        "776e84186ddaa3b9",
    ),
    format_row(
        MergedJudge,
        "judge.merged.user",
        JUDGE,
        "",
        Assigned("merge_score_prompt", 0),
        "0628fade4f054cb5",
    ),
    row(
        MergedJudgeSystem,
        "judge.merged.system",
        JUDGE,
        MERGED_JUDGE,
        Nth(27),
        "776e84186ddaa3b9",
    ),
    format_row(
        MergedIdeaBench,
        "ideabench.merged.user",
        IDEABENCH,
        "",
        Assigned("merge_score_prompt", 0),
        "4f16849869540e8f",
    ),
    row(
        MergedIdeaBenchSystem,
        "ideabench.merged.system",
        IDEABENCH,
        MERGED_IDEABENCH,
        Nth(18),
        "776e84186ddaa3b9",
    ),
    format_row(
        IdeaRating,
        "ideabench.rating",
        IDEABENCH,
        "",
        Assigned("RATING_PROMPT_TEMPLATE", 0),
        "963de39d506dd7d6",
    ),
    format_row(
        IdeaRankingHead,
        "ideabench.ranking.head",
        IDEABENCH,
        "",
        Assigned("RANKING_PROMPT_PREFIX", 0),
        "c688344d59817cc7",
    ),
    row(
        IdeaRankingTarget,
        "ideabench.ranking.target",
        IDEABENCH,
        RANKING,
        Nth(1),
        "bb0f8b82127360ee",
    ),
    row(
        IdeaRankingCandidate,
        "ideabench.ranking.candidate",
        IDEABENCH,
        RANKING,
        Nth(3),
        "152b7353d508ee16",
    ),
    row(
        IdeaRankingJoin,
        "ideabench.ranking.join",
        IDEABENCH,
        RANKING,
        Nth(4),
        "98be486a01834c7b",
    ),
    row(
        IdeaRankingFrame,
        "ideabench.ranking.frame",
        IDEABENCH,
        RANKING,
        Nth(5),
        "03e2c9d1cf8d41f9",
    ),
    row(
        IdeaSeparator,
        "ideabench.separator",
        IDEABENCH,
        "",
        Assigned("IDEA_SEPARATOR", 0),
        "0326b17c4011a5c3",
    ),
    row(
        LimitGenAspect(LimitAspect::Methodology),
        "limitgen.aspect.methodology",
        LIMITGEN,
        ASPECT_CHECK,
        Assigned("aspect", 0),
        "fd39c5844c7c1378",
    ),
    row(
        LimitGenAspect(LimitAspect::ExperimentalDesign),
        "limitgen.aspect.experimental_design",
        LIMITGEN,
        ASPECT_CHECK,
        Assigned("aspect", 1),
        "eeb0368bc20da2dc",
    ),
    row(
        LimitGenAspect(LimitAspect::ResultAnalysis),
        "limitgen.aspect.result_analysis",
        LIMITGEN,
        ASPECT_CHECK,
        Assigned("aspect", 2),
        "24379ae8a6f75b31",
    ),
    row(
        LimitGenAspect(LimitAspect::LiteratureReview),
        "limitgen.aspect.literature_review",
        LIMITGEN,
        ASPECT_CHECK,
        Assigned("aspect", 3),
        "10f50473c887dbb5",
    ),
    row(
        LimitGenAspectCheck,
        "limitgen.aspect_check",
        LIMITGEN,
        ASPECT_CHECK,
        Assigned("SYSTEM_INPUT", 0),
        "4936d83c7e71251d",
    ),
    row(
        LimitGenSubtypes(LimitAspect::Methodology),
        "limitgen.subtypes.methodology",
        LIMITGEN,
        SUBTYPES,
        Assigned("prompt", 0),
        "e9a2ea8c448bf07c",
    ),
    row(
        LimitGenSubtypes(LimitAspect::ExperimentalDesign),
        "limitgen.subtypes.experimental_design",
        LIMITGEN,
        SUBTYPES,
        Assigned("prompt", 1),
        "7d3780eb10da475f",
    ),
    row(
        LimitGenSubtypes(LimitAspect::ResultAnalysis),
        "limitgen.subtypes.result_analysis",
        LIMITGEN,
        SUBTYPES,
        Assigned("prompt", 2),
        "a0beac0c52a9fecd",
    ),
    row(
        LimitGenSubtypes(LimitAspect::LiteratureReview),
        "limitgen.subtypes.literature_review",
        LIMITGEN,
        SUBTYPES,
        Assigned("prompt", 3),
        "5944a6c9ce8252ad",
    ),
    row(
        LimitGenRatingSystem,
        "limitgen.rating.system",
        LIMITGEN,
        "",
        Assigned("RATING_PROMPT", 0),
        "35645d3f896ed523",
    ),
    row(
        LimitGenRatingUser,
        "limitgen.rating.user",
        LIMITGEN,
        "LimitGen_Dataset._evaluate_single",
        Assigned("USER_INPUT", 0),
        "1aadd08676fdf1bc",
    ),
];
