//! Reviews: the buyer of a completed transaction scores its seller, once per transaction,
//! with an overall score, optional sub-scores and a text.

use serde_json::Value;

use super::field_error::FieldError;
use super::locale::{Language, Text};
use super::text::message_text;
use super::text_enum;

/// The longest review text, in characters.
pub const CONTENT_MAX_CHARS: usize = 1000;

/// Scores run from 1 (bad) to 5 (excellent).
pub const SCORES: std::ops::RangeInclusive<i64> = 1..=5;

text_enum! {
    /// What a sub-score is about.
    pub enum Aspect {
        Communication = "communication",
        /// The thing was as the advertisement described it.
        Accuracy = "accuracy",
        Delivery = "delivery",
    }
}

impl Aspect {
    /// The aspect as people read it, in the deployment's language.
    pub fn description(self, language: Language) -> &'static str {
        match (self, language) {
            (Aspect::Communication, Language::Dutch) => "Communicatie",
            (Aspect::Communication, Language::French) => "Communication",
            (Aspect::Accuracy, Language::Dutch) => "Zoals beschreven",
            (Aspect::Accuracy, Language::French) => "Conforme à la description",
            (Aspect::Delivery, Language::Dutch) => "Levering",
            (Aspect::Delivery, Language::French) => "Livraison",
        }
    }
}

/// A review as a client sent it:
/// `{"overallScore": 1-5, "content": "...", "subScores": [{"key": aspect, "score": 1-5}]}`.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewRequest {
    pub overall_score: Option<Value>,
    pub content: Option<Value>,
    pub sub_scores: Option<Value>,
}

/// A review, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewReview {
    pub overall_score: i64,
    pub content: String,
    /// The score of each aspect, in [`Aspect::ALL`]'s order; `None` where none was given.
    pub sub_scores: [Option<i64>; 3],
}

/// Every problem of a review at once.
pub fn check_review(request: &ReviewRequest) -> Result<NewReview, Vec<FieldError>> {
    let mut errors = Vec::new();
    let overall_score = match request.overall_score.as_ref() {
        None | Some(Value::Null) => {
            errors.push(FieldError::missing("overallScore"));
            None
        }
        Some(value) => score("overallScore", value)
            .map_err(|e| errors.push(e))
            .ok(),
    };
    let content = message_text("content", request.content.as_ref(), CONTENT_MAX_CHARS)
        .map_err(|e| errors.push(e))
        .ok();
    let mut sub_scores = [None; 3];
    let mut seen = [false; 3];
    match request.sub_scores.as_ref() {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (n, item) in items.iter().enumerate() {
                let field = format!("subScores[{n}]");
                let aspect = item["key"].as_str().and_then(Aspect::parse);
                let Some(aspect) = aspect else {
                    errors.push(
                        FieldError::new(
                            format!("{field}.key"),
                            "invalid-value",
                            Text::new(
                                "moet communication, accuracy of delivery zijn",
                                "doit être communication, accuracy ou delivery",
                            ),
                        )
                        .with_value(item["key"].clone()),
                    );
                    continue;
                };
                if std::mem::replace(&mut seen[aspect as usize], true) {
                    errors.push(
                        FieldError::new(
                            format!("{field}.key"),
                            "duplicate",
                            Text::new("komt twee keer voor", "apparaît deux fois"),
                        )
                        .with_value(aspect.as_str()),
                    );
                    continue;
                }
                match score(&format!("{field}.score"), &item["score"]) {
                    Ok(value) => sub_scores[aspect as usize] = Some(value),
                    Err(e) => errors.push(e),
                }
            }
        }
        Some(other) => errors.push(
            FieldError::new(
                "subScores",
                "invalid-value",
                Text::new(
                    "moet een lijst van {key, score} zijn",
                    "doit être une liste de {key, score}",
                ),
            )
            .with_value(other.clone()),
        ),
    }
    match (overall_score, content) {
        (Some(overall_score), Some(content)) if errors.is_empty() => Ok(NewReview {
            overall_score,
            content,
            sub_scores,
        }),
        _ => Err(errors),
    }
}

/// A whole score from 1 to 5.
fn score(field: &str, value: &Value) -> Result<i64, FieldError> {
    value
        .as_i64()
        .filter(|n| SCORES.contains(n))
        .ok_or_else(|| {
            FieldError::new(
                field,
                "invalid-value",
                Text::new(
                    "moet een geheel getal van 1 tot 5 zijn",
                    "doit être un nombre entier de 1 à 5",
                ),
            )
            .with_value(value.clone())
        })
}

/// An average score as shown: one decimal; 0 where there is nothing to average.
pub fn average(sum: i64, count: i64) -> f64 {
    if count == 0 {
        return 0.0;
    }
    (sum as f64 * 10.0 / count as f64).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(body: Value) -> ReviewRequest {
        serde_json::from_value(body).unwrap()
    }

    fn codes(body: Value) -> Vec<(String, &'static str)> {
        check_review(&request(body))
            .unwrap_err()
            .into_iter()
            .map(|e| (e.fields.join(","), e.code))
            .collect()
    }

    #[test]
    fn a_good_review_is_taken_with_its_sub_scores_in_order() {
        let review = check_review(&request(json!({
            "overallScore": 4,
            "content": "  Vlot verkocht.\nAanrader. ",
            "subScores": [{"key": "delivery", "score": 5}, {"key": "communication", "score": 3}],
        })))
        .unwrap();
        assert_eq!(review.overall_score, 4);
        assert_eq!(review.content, "Vlot verkocht.\nAanrader.");
        assert_eq!(review.sub_scores, [Some(3), None, Some(5)]);
    }

    #[test]
    fn every_problem_is_named_at_once() {
        assert_eq!(
            codes(
                json!({"subScores": [{"key": "smell", "score": 2}, {"key": "delivery", "score": 6}]})
            ),
            [
                ("overallScore".to_owned(), "missing"),
                ("content".to_owned(), "missing"),
                ("subScores[0].key".to_owned(), "invalid-value"),
                ("subScores[1].score".to_owned(), "invalid-value"),
            ]
        );
        assert_eq!(
            codes(
                json!({"overallScore": 0, "content": "x".repeat(CONTENT_MAX_CHARS + 1),
                         "subScores": [{"key": "delivery", "score": 2}, {"key": "delivery", "score": 2}]})
            ),
            [
                ("overallScore".to_owned(), "invalid-value"),
                ("content".to_owned(), "invalid-length"),
                ("subScores[1].key".to_owned(), "duplicate"),
            ]
        );
        assert_eq!(
            codes(json!({"overallScore": 4.5, "content": "a\u{0}b", "subScores": {}})),
            [
                ("overallScore".to_owned(), "invalid-value"),
                ("content".to_owned(), "control-characters"),
                ("subScores".to_owned(), "invalid-value"),
            ]
        );
    }

    #[test]
    fn averages_have_one_decimal() {
        assert_eq!(average(0, 0), 0.0);
        assert_eq!(average(14, 3), 4.7);
        assert_eq!(average(9, 2), 4.5);
    }
}
