//! JuDGE's rule-based metrics against upstream's own Python: `calc_score.py`'s
//! `Evaluator.calc_meteor` and `calc_metrics` (with xingshi.py, crime_extraction.py,
//! judge_extraction.py, law_extraction.py, chinese2digits, jieba and NLTK's METEOR) run on
//! every pair of hand-written judgments, and every field compared with
//! `mb_eval::metrics::legal`. BERTScore is not computed on either side (its package answered by a
//! stand-in module); NLTK reads the WordNet 3.0 the Rust side reads (`.cache/wordnet/dict`), or,
//! where none is installed, a reader with no synsets stands in on both sides.

use std::path::{Path, PathBuf};
use std::process::Command;

use mb_eval::metrics::legal::{judge_scores, LegalError, LegalScores};
use mb_upstream::Upstream;
use serde_json::Value;

const DRIVER: &str = include_str!("legal_driver.py");

/// Realistic judgments, each with its own mix of sections, penalties, fines and citations.
const JUDGMENTS: &[&str] = &[
    "北京市海淀区人民法院\n刑事判决书\n（2020）京0108刑初123号\n公诉机关北京市海淀区人民检察院。\n被告人张某，男，1985年出生。\n北京市海淀区人民检察院以京海检刑诉〔2020〕100号起诉书指控被告人张某犯盗窃罪，于2020年5月1日向本院提起公诉。本院依法适用简易程序，公开开庭审理了本案。现已审理终结。\n经审理查明：2020年3月，被告人张某在海淀区某超市内窃取他人手机一部，价值人民币3,200元。\n本院认为，被告人张某以非法占有为目的，秘密窃取他人财物，数额较大，其行为已构成盗窃罪。依照《中华人民共和国刑法》第二百六十四条、第五十二条、第五十三条、第六十七条第三款之规定，判决如下：\n被告人张某犯盗窃罪，判处有期徒刑一年六个月，并处罚金人民币五千元。\n（刑期从判决执行之日起计算。）\n如不服本判决，可在接到判决书的第二日起十日内，通过本院或者直接向北京市第一中级人民法院提出上诉。\n审判员 李某\n二〇二〇年六月一日\n书记员 王某",
    "上海市浦东新区人民法院\n刑事判决书\n公诉机关上海市浦东新区人民检察院。\n被告人李某某，女。\n上海市浦东新区人民检察院指控，2019年8月，被告人李某某醉酒驾驶机动车。\n本院认为，被告人李某某在道路上醉酒驾驶机动车，其行为已构成危险驾驶罪。被告人到案后如实供述，依法可以从轻处罚。依照《中华人民共和国刑法》第一百三十三条之一第一款第（二）项、第六十七条第三款、第五十二条之规定，判决如下：\n被告人李某某犯危险驾驶罪，判处拘役二个月，并处罚金人民币4,000元。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。\n审判长 陈某\n审判员 周某",
    "广东省深圳市中级人民法院\n刑事判决书\n公诉机关广东省深圳市人民检察院。\n被告人王某甲，被告人刘某乙。\n深圳市人民检察院指控被告人王某甲、刘某乙犯贩卖毒品罪，于2018年提起公诉。本院依法组成合议庭，公开开庭审理了本案，现已审理终结。\n经审理查明，被告人王某甲、刘某乙共同贩卖甲基苯丙胺五百余克。\n本院认为，被告人王某甲、刘某乙贩卖毒品，数量大，其行为均已构成贩卖毒品罪。依照《中华人民共和国刑法》第三百四十七条第二款第（一）项、第二十五条第一款、第四十八条、第五十七条第一款、第五十九条之规定，判决如下：\n一、被告人王某甲犯贩卖毒品罪，判处死刑，剥夺政治权利终身，并处没收个人全部财产。\n二、被告人刘某乙犯贩卖毒品罪，判处无期徒刑，剥夺政治权利终身，并处没收个人全部财产。\n三、缴获的毒品予以没收。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。\n审判长 赵某",
    "浙江省杭州市西湖区人民法院\n刑事判决书\n公诉机关杭州市西湖区人民检察院。\n被告人孙某。\n杭州市西湖区人民检察院指控被告人孙某犯故意伤害罪、寻衅滋事罪。\n本院认为，被告人孙某故意伤害他人身体，致一人轻伤，其行为已构成故意伤害罪；随意殴打他人，情节恶劣，又构成寻衅滋事罪，应数罪并罚。依照《中华人民共和国刑法》第二百三十四条第一款、第二百九十三条第一款第（一）项、第六十九条之规定，判决如下：\n被告人孙某犯故意伤害罪，判处有期徒刑十个月；犯寻衅滋事罪，判处有期徒刑一年二个月，决定执行有期徒刑一年十个月。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。\n审判员 钱某",
    "江苏省南京市玄武区人民法院\n刑事判决书\n公诉机关南京市玄武区人民检察院。\n被告人周某，被告人吴某。\n经审理查明，被告人周某、吴某以虚构投资项目为名骗取被害人钱款共计人民币120万元。\n本院认为，被告人周某、吴某以非法占有为目的，骗取他人财物，数额特别巨大，其行为均已构成诈骗罪。依照《刑法》第二百六十六条、第二十五条第一款、第二十六条、第二十七条之规定，判决如下：\n一、被告人周某犯诈骗罪，判处有期徒刑十一年，并处罚金人民币十万元。\n二、被告人吴某犯诈骗罪，判处有期徒刑三年，缓刑四年，并处罚金人民币三万元。\n三、责令被告人周某、吴某退赔被害人经济损失。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。\n审判长 郑某\n审判员 冯某",
    "四川省成都市锦江区人民法院\n刑事判决书\n被告人陈某，男，汉族。\n锦江区人民检察院指控被告人陈某犯交通肇事罪，本院于2021年2月公开开庭审理了本案。\n本院认为，被告人陈某违反交通运输管理法规，发生重大事故，致一人死亡，负事故全部责任，其行为已构成交通肇事罪。鉴于其自首并取得谅解，依法从轻处罚。依照《中华人民共和国刑法》第一百三十三条、第六十七条第一款、第七十二条第一款之规定，判决如下：\n被告人陈某犯交通肇事罪，判处有期徒刑一年，缓刑一年六个月。\n（缓刑考验期限，从判决确定之日起计算。）\n本判决为终审判决。",
    "湖北省武汉市江汉区人民法院\n刑事判决书\n公诉机关武汉市江汉区人民检察院。\n被告人黄某，曾因盗窃罪于2015年被判处有期徒刑八个月。\n本院认为，被告人黄某多次盗窃，其行为已构成盗窃罪。被告人黄某系累犯，应当从重处罚。依照《中华人民共和国刑法》第二百六十四条、第六十五条第一款、第五十二条、第五十三条之规定，判决如下：\n被告人黄某犯盗窃罪，判处有期徒刑九个月，并处罚金人民币二千元。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。\n代理审判员 林某",
    "河南省郑州市中原区人民法院\n刑事判决书\n公诉机关郑州市中原区人民检察院。\n被告人何某。\n公诉机关认为，被告人何某的行为构成开设赌场罪。\n本院认为，被告人何某以营利为目的，开设赌场，其行为已构成开设赌场罪。依照《中华人民共和国刑法》第三百零三条第二款、第六十四条之规定，判决如下：\n被告人何某犯开设赌场罪，判处有期徒刑二年，并处罚金人民币20,000元。\n扣押的赌资人民币12,345.50元予以没收，上缴国库。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。",
    "山东省青岛市市南区人民法院\n刑事判决书\n被告人许某，被告人韩某，被告人邓某。\n本院认为，被告人许某、韩某、邓某结伙抢劫他人财物，其行为均已构成抢劫罪。被告人许某又非法持有枪支，构成非法持有枪支罪。依照《中华人民共和国刑法》第二百六十三条、第一百二十八条第一款、第六十九条、第二十五条之规定，判决如下：\n一、被告人许某犯抢劫罪，判处有期徒刑五年，并处罚金人民币一万元；犯非法持有枪支罪，判处有期徒刑一年，决定执行有期徒刑五年六个月，并处罚金人民币一万元。\n二、被告人韩某犯抢劫罪，判处有期徒刑四年，并处罚金人民币八千元。\n三、被告人邓某犯抢劫罪，判处有期徒刑三年六个月，并处罚金人民币六千元。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。",
    "福建省厦门市思明区人民法院\n刑事判决书\n被告人曹某。\n本院认为，被告人曹某明知他人利用信息网络实施犯罪，为其犯罪提供支付结算帮助，情节严重，其行为已构成帮助信息网络犯罪活动罪。依照《中华人民共和国刑法》第二百八十七条之二第一款、第六十七条第三款、第五十二条、第五十三条第一款之规定，判决如下：\n被告人曹某犯帮助信息网络犯罪活动罪，判处有期徒刑七个月，并处罚金人民币3000元。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。",
    "湖南省长沙市岳麓区人民法院\n刑事判决书\n被告人彭某。\n本院认为，被告人彭某在公共场所当众强制猥亵他人，其行为已构成强制猥亵罪。依照《中华人民共和国刑法》第二百三十七条第一款、第二款之规定，判决如下：\n被告人彭某犯强制猥亵罪，判处有期徒刑五年。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。\n审 判 长 蒋某\n人民陪审员 沈某",
    "陕西省西安市雁塔区人民法院\n刑事判决书\n被告人董某。\n本院认为，被告人董某非法收受他人财物，为他人谋取利益，数额巨大，其行为已构成非国家工作人员受贿罪。依照《中华人民共和国刑法》第一百六十三条第一款、第六十四条之规定，判决如下：\n一、被告人董某犯非国家工作人员受贿罪，判处有期徒刑三年，缓刑三年。\n二、被告人董某退缴的违法所得人民币壹拾贰万元予以没收。\n本判决为终审判决。",
    "被告人袁某犯故意杀人罪一案。\n本院认为，被告人袁某故意非法剥夺他人生命，其行为已构成故意杀人罪，犯罪情节特别恶劣。依照《中华人民共和国刑法》第二百三十二条、第四十八条第一款、第五十七条第一款之规定，判决如下：\n被告人袁某犯故意杀人罪，判处死刑，缓期二年执行，剥夺政治权利终身。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。",
    "被告人潘某犯非法吸收公众存款罪。本院认为，被告人潘某违反国家金融管理法规，非法吸收公众存款，扰乱金融秩序，数额巨大。依照《中华人民共和国刑法》第一百七十六条之规定，判决如下：被告人潘某犯非法吸收公众存款罪，判处有期徒刑三年二个月，并处罚金人民币十五万元。",
    "本院认为，被告人田某明知是毒品而非法持有，数量较大，其行为已构成非法持有毒品罪。依照《中华人民共和国刑法》第三百四十八条之规定，判决如下：被告人田某犯非法持有毒品罪，判处管制一年，并处罚金人民币1.5万元。",
    "本院认为，被告人姜某窝藏犯罪分子，其行为已构成窝藏罪；被告人范某包庇犯罪分子，构成包庇罪。依照《刑法》第三百一十条之规定，判决如下：（一）被告人姜某犯窝藏罪，判处拘役五个月；（二）被告人范某犯包庇罪，判处拘役四个月，缓刑六个月。",
    "本院认为，被告人石某的行为构成掩饰、隐瞒犯罪所得罪。依照《中华人民共和国刑法》 第三百一十二条第一款之规定，判决如下：\n被告人石某犯掩饰隐瞒犯罪所得罪，判处有期徒刑八个月，并处罚金人民币二万五千元。",
    "经审理查明，被告人罗某无罪。\n本院认为，公诉机关指控被告人罗某犯诈骗罪的证据不足，指控的犯罪不能成立。依照《中华人民共和国刑事诉讼法》第二百条第（三）项之规定，判决如下：\n被告人罗某无罪。\n如不服本判决，可在接到判决书的第二日起十日内提出上诉。",
    "本院认为，被告人梁某犯侵犯公民个人信息罪，情节轻微，依照《中华人民共和国刑法》第二百五十三条之一、第三十七条之规定，判决如下：被告人梁某犯侵犯公民个人信息罪，免予刑事处罚。",
    "生成的判决书：被告人宋某犯盗窃他人电动车罪，判处有期徒刑1年3个月，并处罚金人民币3,000元。依据刑法第264条。",
    "根据案件事实，本院判决如下：被告人唐某犯组织卖淫罪，判处有期徒刑十年，并处罚金人民币二十万元；犯协助组织卖淫罪，判处有期徒刑二年。决定执行有期徒刑十一年，并处罚金人民币二十万元。依照《中华人民共和国刑法》第三百五十八条第一款、第四款之规定。",
    "本院认为：被告人冯某(男)的行为构成职务侵占罪,依照《中华人民共和国刑法》第二百七十一条第一款之规定,判决如下:被告人冯某犯职务侵占罪,判处有期徒刑二年六个月,并处罚金人民币5万元。",
    "本院认为，被告人邹某的行为构成虚开增值税专用发票罪。依照《中华人民共和国刑法》第二百零五条之规定，判决如下：\n被告人邹某犯虚开增值税专用发票罪，判处有期徒刑十年零六个月，并处罚金人民币三十万元。\n附：本案适用的法律条文\n《中华人民共和国刑法》第二百零五条",
    "本院认为，被告人于某的行为构成非法捕捞水产品罪。依照《中华人民共和国刑法》第三百四十条之规定，判决如下：\n被告人于某犯非法捕捞水产品罪，判处拘役三个月，缓刑四个月，并处罚金人民币一千五百元，已预缴。\n如未按本判决指定的期间履行给付金钱义务，应当加倍支付迟延履行期间的债务利息。",
];

/// Texts that test the edges: empty, no sections, odd numbers, huge numbers, markup upstream
/// strips before its HTML pass, fractions and capital numerals.
const ADVERSARIAL: &[&str] = &[
    "",
    "   \n\t ",
    "这是一段与判决无关的文字。",
    "判决如下",
    "本院认为",
    "如不服本判决，可上诉。",
    "被告人甲犯盗窃罪",
    "判处有期徒刑九千九百九十九亿年，并处罚金人民币999,999,999,999元。",
    "判处罚金人民币123456789012元，并处罚金人民币九亿九千九百万元。",
    "判决如下：判处有期徒刑一二三四五六七年",
    "判决如下：并处罚金百分之五十元，并处罚金人民币一点五万元，并处罚金人民币.5万元",
    "判决如下：并处罚金人民币伍仟元整，罚金人民币两千元",
    "判决如下：被告人甲犯盗窃罪，判处有期徒刑一年零六个月；被告人乙犯盗窃罪，判处有期徒刑一年零六个月。",
    "判决如下：被告人甲犯抢劫罪、盗窃罪、诈骗罪，判处无期徒刑；被告人乙犯故意杀人罪，判处死刑；被告人丙判处死刑。",
    "<p>本院认为，被告人甲构成盗窃罪。</p><br>判决如下：被告人甲犯盗窃罪，判处拘役一个月。&#xD;",
    "本院认为，依照《中华人民共和国刑法》第一一一一一一一一一一一一一一一一一一一一一一一条之规定，判决如下：有期徒刑一年",
    "本院认为，依照《中华人民共和国刑法》第十条、第一百条、第一千条、第零条之规定判决如下：管制三个月",
    "本院认为1 < 2 & 3，判决如下：\n判处有期徒刑2年3个月\n",
    "罚金,罚金至元罚金人民币一千元罚金以元",
    "判决如下：被告人甲犯了非法占有他人财物罪，被告人乙犯有故意伤害他人身体罪，被告人丙犯的是走私罪，被告人丁犯（未遂）抢劫罪",
    "判决如下：\n被告人甲犯盗窃罪\n\u{3000}\u{a0}审判长\u{1c}某\n\n",
    "审理终结。本院认为，甲犯罪。判决如下：有期徒刑三年。撤销原判决中被告人甲犯诈骗罪部分。",
    "判决如下：被告人甲犯盗窃罪，判处有期徒刑１年。",
    "判决如下：<b>被告人甲犯盗窃罪</b>，判处拘役一个月。",
    "本院认为，被告人的 running dogs 咬伤 2 名 geese 饲养员 ran away。判决如下：被告人甲犯盗窃罪，判处有期徒刑 2 年，better 罚金 3000 元。",
];

/// The checkout and the differential venv, or `None` after a `skipped:` line (a failure under
/// CI).
fn find() -> Option<(Upstream, PathBuf, PathBuf)> {
    let side = mb_core::test_data::UpstreamPython::find()?;
    Some((
        Upstream::open(&side.checkout).unwrap(),
        side.checkout,
        side.python,
    ))
}

fn run_python(
    python: &Path,
    checkout: &Path,
    wordnet: Option<&tempfile::TempDir>,
    seed: &str,
    pairs: &[(&str, &str)],
) -> Vec<Value> {
    let mut command = Command::new(python);
    command
        .args(["-c", DRIVER])
        .arg(checkout)
        .args(wordnet.map(tempfile::TempDir::path))
        .env("PYTHONHASHSEED", seed);
    let input = serde_json::to_string(pairs).unwrap();
    serde_json::from_value(mb_core::test_data::run_json(&mut command, &input)).unwrap()
}

fn float_bits(value: Option<f64>) -> Value {
    value.map_or(Value::Null, |v| Value::from(v.to_bits()))
}

/// The Rust result in the driver's form: floats as their bits, numbers as decimal strings.
fn as_driver_row(s: &LegalScores) -> Value {
    serde_json::json!({
        "reasoning_meteor": float_bits(s.reasoning_meteor),
        "judge_meteor": float_bits(s.judge_meteor),
        "exp_reasoning": s.exp_reasoning, "exp_judge": s.exp_judge,
        "gen_reasoning": s.gen_reasoning, "gen_judge": s.gen_judge,
        "crime_recall": float_bits(Some(s.crime_recall)),
        "crime_precision": float_bits(Some(s.crime_precision)),
        "time_score": float_bits(s.time_score),
        "amount_score": float_bits(s.amount_score),
        "penalcode_index_recall": float_bits(Some(s.penalcode_index_recall)),
        "penalcode_index_precision": float_bits(Some(s.penalcode_index_precision)),
        "exp_crime": sorted(&s.exp_crime), "gen_crime": sorted(&s.gen_crime),
        "exp_penalcode_index": sorted(&s.exp_penalcode_index),
        "gen_penalcode_index": sorted(&s.gen_penalcode_index),
        "exp_time": s.exp_time.to_string(), "gen_time": s.gen_time.to_string(),
        "exp_amount": s.exp_amount.to_string(), "gen_amount": s.gen_amount.to_string(),
    })
}

/// Whether Python raised what the port reports: `int()` on the same text, or chinese2digits
/// comparing `None` (a character that is no numeral) or dividing by zero.
fn same_failure(error: &LegalError, raised: &str) -> bool {
    match error {
        LegalError::Int(text) => raised.contains(&format!("int() with base 10: '{text}'")),
        LegalError::Number(_) => {
            raised.starts_with("TypeError") || raised.contains("DivisionByZero")
        }
        _ => false,
    }
}

/// Python's `sorted` of strings: by code point, as Rust's `str` order.
fn sorted(items: &[String]) -> Vec<String> {
    let mut items = items.to_vec();
    items.sort();
    items
}

#[test]
fn judge_metrics_match_upstreams_python() {
    let Some((upstream, checkout, python)) = find() else {
        return;
    };
    let texts: Vec<&str> = JUDGMENTS.iter().chain(ADVERSARIAL).copied().collect();
    // Every judgment against every other (and itself); each adversarial text against three
    // judgments, on both sides, and against every other adversarial text.
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for generated in JUDGMENTS {
        for expected in JUDGMENTS {
            pairs.push((generated, expected));
        }
    }
    for (at, odd) in ADVERSARIAL.iter().enumerate() {
        for judgment in [0, 2 + at % 7, 9 + at % 13].map(|i| JUDGMENTS[i]) {
            pairs.push((odd, judgment));
            pairs.push((judgment, odd));
        }
        for other in ADVERSARIAL {
            pairs.push((odd, other));
        }
    }
    assert!(texts.len() >= 45 && pairs.len() > 1_000);
    // Upstream picks the nearest charge name by iterating a set, whose order follows the
    // string hash seed: two seeds agreeing shows that no input here depends on it.
    let wordnet = crate::common::nltk_wordnet_home();
    let expected = run_python(&python, &checkout, wordnet.as_ref(), "0", &pairs);
    assert_eq!(expected.len(), pairs.len());
    assert!(expected == run_python(&python, &checkout, wordnet.as_ref(), "12345", &pairs));
    let mut failures = Vec::new();
    let mut errors = 0;
    let mut refused = 0;
    for ((generated, golden), python_row) in pairs.iter().zip(&expected) {
        let ours = judge_scores(&upstream, generated, golden);
        let matches = match (&ours, python_row.get("error")) {
            (Ok(scores), None) => as_driver_row(scores) == *python_row,
            (Err(error), Some(raised)) => {
                errors += 1;
                let markup = generated.contains("<b>") || golden.contains("<b>");
                (markup && matches!(error, LegalError::Markup(_)))
                    || same_failure(error, raised.as_str().unwrap_or_default())
            }
            // Markup is refused, not imitated (upstream's BeautifulSoup rewrites it).
            (Err(LegalError::Markup(_)), None) => {
                refused += 1;
                generated.contains("<b>") || golden.contains("<b>")
            }
            _ => false,
        };
        if !matches {
            failures.push(format!(
                "generated {generated:?}\nexpected {golden:?}\n  python {python_row}\n  rust   {}",
                match &ours {
                    Ok(scores) => as_driver_row(scores).to_string(),
                    Err(e) => format!("error: {e}"),
                }
            ));
        }
    }
    eprintln!(
        "legal parity: {} pairs of {} texts compared, {errors} raising on both sides, \
         {refused} with markup refused",
        pairs.len(),
        texts.len()
    );
    assert!(errors > 0 && refused > 0);
    assert!(
        failures.is_empty(),
        "{} of {} pairs differ:\n{}",
        failures.len(),
        pairs.len(),
        failures
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
