//! The datasets scored by models beside their own metrics: IdeaBench's rating, rankings and
//! merged score; WritingBench's critic, a role of its own; and every one of their requests in
//! upstream's words when the run has them.

use mb_datasets::catalog::Catalog;
use mb_datasets::row::Row;
use mb_eval::{evaluator_for, EvalError, Graders, IDEA_SEPARATOR};
use mb_llm::ops::{Backend, OutputHandling};
use mb_llm::testing::ScriptedProvider;
use mb_upstream::{Upstream, Wording};
use serde_json::json;

/// Upstream's checkout beside the project, or `None` after a `skipped:` line (a failure under
/// CI).
fn upstream() -> Option<Upstream> {
    Some(Upstream::open(&mb_core::test_data::upstream_checkout()?).unwrap())
}

fn row(columns: serde_json::Value) -> Row {
    Row::from_columns(columns.as_object().unwrap().clone()).unwrap()
}

fn idea_row() -> Row {
    row(json!({
        "test_idx": 3, "dataset_name": "IdeaBench", "lang": "en",
        "input_prompt": "Here are the abstracts: ...",
        "info": {"abstract": "Honey bees dance to tell each other where the flowers are."},
    }))
}

#[tokio::test]
async fn ideabench_rates_ranks_and_merges_as_upstream_does() {
    let catalog = Catalog::builtin().unwrap();
    let ideas = evaluator_for(catalog.dataset("IdeaBench").unwrap()).unwrap();
    let answer = format!(
        "Ants follow scent trails.{IDEA_SEPARATOR}\n Bees dance to tell where the flowers are. "
    );
    let scripted = ScriptedProvider::new(&[
        "```json\n{\"rating\": 6, \"explanation\": \"close\"}\n```",
        "1. **Hypothesis B**: bold\n2. **Hypothesis A**: solid\n3. **Hypothesis C**",
        "I cannot rank these.",
        "Score: 8",
    ]);
    let judge = Backend::model(scripted.clone(), OutputHandling::Upstream, 0);
    let scored = ideas
        .evaluate(&idea_row(), &answer, Graders::both(&judge))
        .await
        .unwrap();
    assert_eq!(
        scored["generated_hypotheses"],
        json!([
            "Ants follow scent trails.",
            "Bees dance to tell where the flowers are.",
            "NULL"
        ])
    );
    // The hypothesis closest to the abstract is the one rated and judged.
    assert_eq!(
        scored["best_hypothesis_by_bertf1"],
        json!("Bees dance to tell where the flowers are.")
    );
    assert_eq!(scored["llm_rating_score"], json!(6));
    assert_eq!(scored["llm_novelty_ranking_score"], json!(1.0 / 3.0));
    // A reply that ranks nothing places the paper's idea at 0, as upstream scores it.
    assert_eq!(scored["llm_feasibility_ranking_score"], json!(-1.0 / 3.0));
    assert_eq!(scored["llm_as_judge_score"], json!(8));
    assert_eq!(scored["bert_score"], json!(null));
    let operations = scripted.operations();
    assert_eq!(
        operations,
        [
            "judge_idea_rating",
            "judge_idea_ranking",
            "judge_idea_ranking",
            "judge_overall"
        ]
    );
    let error = ideas
        .evaluate(&idea_row(), &answer, Graders::both(&Backend::offline()))
        .await
        .unwrap_err();
    assert!(
        matches!(error, EvalError::NeedsJudge { role: "judge", .. }),
        "{error}"
    );
}

#[tokio::test]
async fn writingbench_is_scored_by_the_critic_not_the_judge() {
    let catalog = Catalog::builtin().unwrap();
    let name = "WritingBench-Politics&Law";
    let writing = evaluator_for(catalog.dataset(name).unwrap()).unwrap();
    let brief = row(json!({
        "test_idx": 1, "dataset_name": name, "lang": "en",
        "input_prompt": "Write a policy brief on river cleanup.",
        "info": {"criteria": [{"name": "Clarity", "criteria_description": "Is it clear?"}]},
    }));
    let critic = ScriptedProvider::new(&["```json\n{\"score\": 7, \"reason\": \"clear\"}\n```"]);
    let critic = Backend::model(critic, OutputHandling::Upstream, 0);
    let judge = ScriptedProvider::new(&[]);
    let judge = Backend::model(judge.clone(), OutputHandling::Upstream, 0);
    let scored = writing
        .evaluate(
            &brief,
            "A brief.",
            Graders {
                judge: &judge,
                critic: &critic,
            },
        )
        .await
        .unwrap();
    assert_eq!(scored["score"], json!(7));
    assert_eq!(scored["criteria"][0]["name"], json!("Clarity"));
    let offline = Backend::offline();
    let error = writing
        .evaluate(
            &brief,
            "A brief.",
            Graders {
                judge: &judge,
                critic: &offline,
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(error, EvalError::NeedsJudge { role: "critic", .. }),
        "{error}"
    );
    assert!(error.to_string().contains("critic role"), "{error}");
}

#[tokio::test]
async fn with_upstreams_words_every_judge_request_is_upstreams() {
    let Some(checkout) = upstream() else { return };
    let catalog = Catalog::builtin().unwrap();
    let ideas = evaluator_for(catalog.dataset("IdeaBench").unwrap()).unwrap();
    let scripted = ScriptedProvider::then_always(&[], "Score: 5");
    let wording = Wording::upstream(checkout);
    let judge =
        Backend::model(scripted.clone(), OutputHandling::Upstream, 0).with_wording(wording.clone());
    let answer = format!("One.{IDEA_SEPARATOR}Two.");
    ideas
        .evaluate(&idea_row(), &answer, Graders::both(&judge))
        .await
        .unwrap();
    let upstream = wording.checkout().unwrap();
    let sent = scripted.requests();
    let abstract_ = "Honey bees dance to tell each other where the flowers are.";
    assert_eq!(
        sent[0].messages,
        upstream.idea_rating("One.", abstract_).unwrap()
    );
    assert_eq!(
        sent[1].messages,
        upstream
            .idea_ranking("novelty", abstract_, &["One.", "Two.", "NULL"])
            .unwrap()
    );
    let fields = mb_upstream::ideabench_fields(None, &json!(null), -1.0 / 3.0, -1.0 / 3.0);
    assert_eq!(
        sent[3].messages,
        upstream
            .merged_judge(
                mb_upstream::MergedOf::IdeaBench,
                "Here are the abstracts: ...",
                "One.",
                abstract_,
                &fields,
            )
            .unwrap()
    );
    // Nothing went out in the paraphrase.
    assert_eq!(wording.paraphrased_prompts(), Vec::<&str>::new());
}

#[tokio::test]
async fn judge_shows_its_legal_metrics_as_upstream_writes_them() {
    let Some(checkout) = upstream() else { return };
    let catalog = Catalog::builtin().unwrap();
    let judge_set = evaluator_for(catalog.dataset("JuDGE").unwrap()).unwrap();
    let facts = "经审理查明，被告人张三于2020年3月盗窃他人手机一部，价值人民币四千元。";
    let judgment = |months: &str, fine: &str| {
        format!(
            "{facts}本院认为，被告人张三以非法占有为目的，秘密窃取他人财物，数额较大，其行为已构成盗窃罪。\
             依照《中华人民共和国刑法》第二百六十四条之规定，判决如下：被告人张三犯盗窃罪，\
             判处有期徒刑{months}，并处罚金人民币{fine}元。"
        )
    };
    let golden = judgment("一年", "五千");
    let case = row(json!({
        "test_idx": 2, "dataset_name": "JuDGE", "lang": "zh", "input_prompt": facts,
        "info": {"golden_answer": golden},
    }));
    let scripted = ScriptedProvider::then_always(&[], "7");
    let wording = Wording::upstream(checkout);
    let judge =
        Backend::model(scripted.clone(), OutputHandling::Upstream, 0).with_wording(wording.clone());
    let response = judgment("十个月", "三千");
    let scored = judge_set
        .evaluate(&case, &response, Graders::both(&judge))
        .await
        .unwrap();
    assert_eq!(scored["crime_recall"], json!(1.0), "{scored:?}");
    assert_eq!(scored["exp_time"], json!(12));
    assert_eq!(scored["gen_time"], json!(10));
    let time_score = scored["time_score"].as_f64().unwrap();
    assert!((time_score - 10.0 / 12.0).abs() < 1e-12);
    assert_eq!(scored["reasoning_bert_score"], json!(null));
    assert_eq!(scored["llm_as_judge_score"], json!(7));
    let fields = mb_upstream::judge_fields(&mb_upstream::JUDGE_METRICS, Some(time_score));
    let expected = wording
        .checkout()
        .unwrap()
        .merged_judge(
            mb_upstream::MergedOf::Judge,
            facts,
            &response,
            &golden,
            &fields,
        )
        .unwrap();
    assert_eq!(scripted.requests()[0].messages, expected);
    // Without a checkout the lexicon is missing and the judge is told so.
    let plain = ScriptedProvider::then_always(&[], "5");
    let paraphrase = Backend::model(plain.clone(), OutputHandling::Upstream, 0);
    let scored = judge_set
        .evaluate(&case, &response, Graders::both(&paraphrase))
        .await
        .unwrap();
    assert_eq!(scored.get("time_score"), None);
    assert!(plain.requests()[0].messages[1]
        .content
        .contains("charge lexicon"));
}
