//! Evaluation end to end on the built-in sample, the judge path with a scripted model, and
//! the refusal of an offline judge.

use mb_datasets::catalog::{Catalog, DatasetType};
use mb_datasets::row::Row;
use mb_datasets::sample::{sample_source, SAMPLE_SET};
use mb_datasets::{load, Dataset};
use mb_eval::{builtin_statistics, summarize_run, Graders};
use mb_eval::{evaluate, evaluator_for, EvalError, EvaluateDetail, Prediction};
use mb_llm::ops::{Backend, OutputHandling};
use mb_llm::testing::ScriptedProvider;
use serde_json::{json, Value};

fn sample() -> Vec<Dataset> {
    let catalog = Catalog::builtin().unwrap();
    load(
        &sample_source().unwrap(),
        &catalog,
        DatasetType::Domain,
        SAMPLE_SET,
    )
    .unwrap()
}

/// The answer a perfect system gives: the golden answer, or the abstaining option.
fn perfect_answer(row: &Row) -> String {
    let golden = row.golden_answer().unwrap();
    match row.info.get("category").and_then(Value::as_u64) {
        Some(5) => "Not mentioned in the conversation".to_string(),
        // Only the part before `;` of a category-3 answer is scored.
        Some(3) => golden.split(';').next().unwrap().trim().to_string(),
        _ => golden.to_string(),
    }
}

fn predictions(dataset: &Dataset, answer: impl Fn(&Row) -> String) -> Vec<Prediction> {
    dataset
        .test
        .iter()
        .map(|row| Prediction {
            test_idx: row.test_idx,
            messages: Vec::new(),
            response: answer(row),
            dataset: dataset.name().to_string(),
        })
        .collect()
}

async fn details(
    datasets: &[Dataset],
    answer: impl Fn(&Row) -> String + Copy,
) -> Vec<EvaluateDetail> {
    let mut all = Vec::new();
    for dataset in datasets {
        let evaluator = evaluator_for(&dataset.config).unwrap();
        let predictions = predictions(dataset, answer);
        all.extend(
            evaluate(
                dataset,
                &predictions,
                evaluator.as_ref(),
                Graders::both(&Backend::offline()),
            )
            .await
            .unwrap(),
        );
    }
    all
}

#[tokio::test]
async fn the_sample_domain_is_scored_and_summarized() {
    let datasets = sample();
    let perfect = details(&datasets, perfect_answer).await;
    let locomo: Vec<&EvaluateDetail> = perfect
        .iter()
        .filter(|d| d.dataset == "Sample-Locomo")
        .collect();
    assert_eq!(locomo.len(), datasets[0].test.len());
    for detail in &locomo {
        assert_eq!(detail.metrics["f1"], json!(1.0), "{detail:?}");
    }
    // METEOR of a text against itself is just under 1 (one chunk still pays a tiny penalty).
    for detail in perfect.iter().filter(|d| d.dataset == "Sample-Stories") {
        let meteor = detail.metrics["meteor"].as_f64().unwrap();
        assert!(meteor > 0.99 && meteor < 1.0, "{meteor}");
    }
    let silent = details(&datasets, |_| "I cannot say.".to_string()).await;
    let stats = builtin_statistics().unwrap();
    let configs: Vec<_> = datasets.iter().map(|d| d.config.clone()).collect();
    let good = summarize_run(DatasetType::Domain, SAMPLE_SET, &configs, &perfect, &stats).unwrap();
    let bad = summarize_run(DatasetType::Domain, SAMPLE_SET, &configs, &silent, &stats).unwrap();
    let score = |summary: &Value| summary["summary"]["average"].as_f64().unwrap();
    assert!(score(&good) > 0.99 && score(&bad) < 0.2, "{good} {bad}");
    // The sample's statistics are the identity: normalized group means equal raw means.
    assert_eq!(
        good["minmax_normalized_average"]["Sample-Locomo"][2],
        good["average"]["Sample-Locomo"]
    );

    let single = summarize_run(
        DatasetType::Single,
        "Sample-Locomo",
        &configs[..1],
        &perfect[..locomo.len()],
        &stats,
    )
    .unwrap();
    assert_eq!(single, json!({"summary": {"f1": 1.0}}));
}

fn row(columns: Value) -> Row {
    Row::from_columns(columns.as_object().unwrap().clone()).unwrap()
}

#[tokio::test]
async fn judged_metrics_use_the_judge_role_and_refuse_an_offline_one() {
    let catalog = Catalog::builtin().unwrap();
    let dialsim = evaluator_for(catalog.dataset("DialSim-friends").unwrap()).unwrap();
    let question = row(json!({
        "test_idx": 0, "dataset_name": "DialSim-friends", "lang": "en",
        "input_prompt": "Who did Ross marry in Las Vegas?",
        "info": "{'golden_answer': 'Rachel'}",
    }));
    // An exact match needs no judge, even an offline one.
    let exact = dialsim
        .evaluate(&question, "rachel.", Graders::both(&Backend::offline()))
        .await
        .unwrap();
    assert_eq!(exact["accuracy"], json!(true));
    // Otherwise the judge decides; an unusable reply is re-asked.
    let scripted = ScriptedProvider::then_always(&["I think it is right", "Correct"], "Wrong");
    let judge = Backend::model(scripted.clone(), OutputHandling::Tolerant, 2);
    let judged = dialsim
        .evaluate(&question, "He married Rachel Green", Graders::both(&judge))
        .await
        .unwrap();
    assert_eq!(judged["accuracy"], json!(true));
    let prompts = scripted.prompts();
    assert_eq!(prompts.len(), 2);
    assert!(prompts[0].contains("Rachel") && prompts[0].contains("He married Rachel Green"));

    let error = dialsim
        .evaluate(&question, "Monica", Graders::both(&Backend::offline()))
        .await
        .unwrap_err();
    assert!(matches!(error, EvalError::NeedsJudge { .. }));
    assert!(error.to_string().contains("DialSim-friends") && error.to_string().contains("--llm"));

    let nfcats = evaluator_for(catalog.dataset("NFCats").unwrap()).unwrap();
    let why = row(json!({
        "test_idx": 3, "dataset_name": "NFCats", "lang": "en", "input_prompt": "Why do cats purr?", "info": "{}",
    }));
    let scripted =
        ScriptedProvider::then_always(&["Clear and accurate.\n###Score of the answer: 4"], "Wrong");
    let scored = nfcats
        .evaluate(
            &why,
            "Purring is...",
            Graders::both(&Backend::model(scripted, OutputHandling::Tolerant, 2)),
        )
        .await
        .unwrap();
    assert_eq!(scored["score"], json!(4));
    assert!(nfcats
        .evaluate(&why, "x", Graders::both(&Backend::offline()))
        .await
        .is_err());
    // A judge that fails to answer scores 1, as upstream scores a request that raised.
    let failing = Backend::model(ScriptedProvider::new(&[]), OutputHandling::Upstream, 0);
    let scored = nfcats
        .evaluate(&why, "x", Graders::both(&failing))
        .await
        .unwrap();
    assert_eq!(scored["score"], json!(1));
    nfcats_in_upstreams_words(nfcats.as_ref(), &why).await;
    dialsim_in_upstreams_words(dialsim.as_ref(), &question).await;
    hellobench_in_upstreams_words(&catalog).await;

    // LimitGen: aspect yes, subtype 2 (the planted "limited datasets"), rating 4 for the first
    // limitation; aspect no for the second.
    let limitgen = evaluator_for(catalog.dataset("LimitGen-Syn").unwrap()).unwrap();
    let paper = row(json!({
        "test_idx": 9, "dataset_name": "LimitGen-Syn", "lang": "en", "input_prompt": "",
        "input_chat_messages": [{"role": "system", "content": "List limitations."}, {"role": "user", "content": "Paper..."}],
        "info": {"ground_truth": "Only one small dataset is used.", "category": "dataset"},
    }));
    let scripted = ScriptedProvider::then_always(
        &[
            "Yes.",
            "2",
            "```json\n{\"explanation\": \"same point\", \"rating\": 4}\n```",
            "no",
        ],
        "Wrong",
    );
    let answer = "{\"limitations\": [\"Evaluated on a single dataset.\", \"The prose is dense.\"]}";
    let scored = limitgen
        .evaluate(
            &paper,
            answer,
            Graders::both(&Backend::model(
                scripted.clone(),
                OutputHandling::Tolerant,
                2,
            )),
        )
        .await
        .unwrap();
    assert_eq!(scored["accuracy"], json!(true));
    assert_eq!(scored["rating"], json!(4));
    assert_eq!(scored["accuracy_list"], json!([true, false]));
    assert_eq!(
        scored["predicted_subtype_list"],
        json!(["limited datasets", "N/A"])
    );
    assert_eq!(scripted.prompts().len(), 4);
    let error = limitgen
        .evaluate(&paper, answer, Graders::both(&Backend::offline()))
        .await
        .unwrap_err();
    assert!(matches!(error, EvalError::NeedsJudge { .. }), "{error}");
}

#[tokio::test]
async fn jre_l_records_its_computed_metrics_beside_the_merged_score() {
    let catalog = Catalog::builtin().unwrap();
    let jre = evaluator_for(catalog.dataset("JRE-L").unwrap()).unwrap();
    let paper = row(json!({
        "test_idx": 4, "dataset_name": "JRE-L", "lang": "en",
        "input_prompt": "Write a popular-science article about this paper.",
        "info": {"pr-abstract": "Bees dance to tell each other where the flowers are."},
    }));
    let article = "Honey bees dance. The dance tells other bees where the flowers are found.";
    let scripted = ScriptedProvider::then_always(&["Overall: 7"], "Wrong");
    let scored = jre
        .evaluate(
            &paper,
            article,
            Graders::both(&Backend::model(
                scripted.clone(),
                OutputHandling::Upstream,
                0,
            )),
        )
        .await
        .unwrap();
    assert_eq!(scored["llm_as_judge_score"], json!(7));
    let cli = mb_eval::metrics::readability::coleman_liau(article);
    assert_eq!(scored["CLI"], json!(cli));
    assert!(scored["Rouge-L"].as_f64().unwrap() > 0.3, "{scored:?}");
    assert!(
        scored.get("BERTScore-F1").is_none(),
        "not computed, so not recorded"
    );
    let prompt = &scripted.prompts()[0];
    assert!(prompt.contains(&format!("- CLI: {cli:.4} (")), "{prompt}");
    match mb_eval::metrics::readability::readability(article) {
        Ok(r) => {
            assert_eq!(scored["FKGL"], json!(r.fkgl));
            assert_eq!(scored["DCRS"], json!(r.dcrs));
        }
        Err(why) => {
            mb_core::test_data::skip(why);
            assert!(scored.get("FKGL").is_none());
        }
    }
}

/// With upstream's checkout, NFCats' judge gets upstream's system message and prompt, with
/// upstream's sampling.
async fn nfcats_in_upstreams_words(nfcats: &dyn mb_eval::Evaluator, why: &Row) {
    let Some(dir) = mb_core::test_data::upstream_checkout() else {
        return;
    };
    let wording = mb_upstream::Wording::upstream(mb_upstream::Upstream::open(&dir).unwrap());
    let scripted = ScriptedProvider::then_always(&["4"], "Wrong");
    let judge =
        Backend::model(scripted.clone(), OutputHandling::Upstream, 0).with_wording(wording.clone());
    let scored = nfcats
        .evaluate(why, "Purring is...", Graders::both(&judge))
        .await
        .unwrap();
    assert_eq!(scored["score"], json!(4));
    let request = &scripted.requests()[0];
    let [system, prompt] = <[_; 2]>::try_from(
        wording
            .checkout()
            .unwrap()
            .nfcats_judge("Why do cats purr?", "Purring is...")
            .unwrap(),
    )
    .unwrap()
    .map(|message| message.content);
    assert_eq!(request.messages[0].content, system);
    assert_eq!(request.messages[1].content, prompt);
    assert!(request.messages[1].content.contains("Why do cats purr?"));
    assert!(request.messages[1].content.contains("Purring is..."));
    assert_eq!(
        (request.sampling.temperature, request.sampling.top_p),
        (0.0, Some(0.1))
    );
    assert!(wording.paraphrased_prompts().is_empty());
}

/// With upstream's checkout, DialSim's judge gets upstream's system message and prompt, with
/// upstream's sampling.
async fn dialsim_in_upstreams_words(dialsim: &dyn mb_eval::Evaluator, question: &Row) {
    let Some(dir) = mb_core::test_data::upstream_checkout() else {
        return;
    };
    let wording = mb_upstream::Wording::upstream(mb_upstream::Upstream::open(&dir).unwrap());
    let scripted = ScriptedProvider::then_always(&["Correct"], "Wrong");
    let judge =
        Backend::model(scripted.clone(), OutputHandling::Upstream, 0).with_wording(wording.clone());
    let scored = dialsim
        .evaluate(question, "He married Rachel Green", Graders::both(&judge))
        .await
        .unwrap();
    assert_eq!(scored["accuracy"], json!(true));
    let request = &scripted.requests()[0];
    let [system, prompt] = <[_; 2]>::try_from(
        wording
            .checkout()
            .unwrap()
            .dialsim_judge(
                "Who did Ross marry in Las Vegas?",
                "Rachel",
                "He married Rachel Green",
            )
            .unwrap(),
    )
    .unwrap()
    .map(|message| message.content);
    assert_eq!(request.messages[0].content, system);
    assert_eq!(request.messages[1].content, prompt);
    assert_eq!(
        (request.sampling.temperature, request.sampling.top_p),
        (0.2, Some(0.1))
    );
    assert!(wording.paraphrased_prompts().is_empty());
}

/// With upstream's checkout, HelloBench's checklist judge gets upstream's system message and
/// prompt, the checklist written as upstream's `json.dumps` writes it.
async fn hellobench_in_upstreams_words(catalog: &Catalog) {
    let Some(dir) = mb_core::test_data::upstream_checkout() else {
        return;
    };
    let name = "HelloBench-Creative&Design";
    let hellobench = evaluator_for(catalog.dataset(name).unwrap()).unwrap();
    let item = row(json!({
        "test_idx": 1, "dataset_name": name, "lang": "en",
        "input_prompt": "Write about a cafe.",
        "info": {"checklist": [{"checklist_id": 0, "checklist_content": "Is it about a café?"}]},
    }));
    let wording = mb_upstream::Wording::upstream(mb_upstream::Upstream::open(&dir).unwrap());
    let scripted = ScriptedProvider::then_always(
        &["[{\"checklist_id\": 0, \"reason\": \"yes\", \"evaluation_score\": 1}]"],
        "Wrong",
    );
    let judge =
        Backend::model(scripted.clone(), OutputHandling::Upstream, 0).with_wording(wording.clone());
    let scored = hellobench
        .evaluate(&item, "The cafe is small", Graders::both(&judge))
        .await
        .unwrap();
    assert_eq!(scored["avg_score"], json!(1.0));
    let request = &scripted.requests()[0];
    let [system, prompt] = <[_; 2]>::try_from(
        wording
            .checkout()
            .unwrap()
            .hellobench_checklist(
                "Write about a cafe.",
                "The cafe is small",
                "[{\"checklist_id\": 0, \"checklist_content\": \"Is it about a café?\"}]",
                1,
            )
            .unwrap(),
    )
    .unwrap()
    .map(|message| message.content);
    assert_eq!(request.messages[0].content, system);
    assert_eq!(request.messages[1].content, prompt);
    assert!(wording.paraphrased_prompts().is_empty());
}
