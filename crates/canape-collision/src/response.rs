//! Which contact response answers a pair of collision models.
//!
//! SOFA names a response by its class with optional parameters, `name?var=value&var=value`
//! (core/collision/Contact.cpp: `Contact::Create`); the contact manager's `responseParams` are
//! appended after a `?` (CollisionResponse::getContactResponse). A model's own
//! `contactResponse` takes precedence: CollisionResponse uses it when only one of the two
//! models sets one, or both set the same; RuleBasedContactManager (RuleBasedContactManager.cpp)
//! takes the first model's, else the second's, else the first of its `rules` that matches the
//! pair either way round (a rule is a triplet: two model names, group numbers or `*`, then a
//! response), else its default response.
//!
//! Responses and rules are parsed once, at init. The pipeline chooses a pair's response on
//! the pair's first detection (comparing the rules' names with the models' then, once per
//! pair) and keeps the choice; `nullptr` is SOFA's deliberate "no response".

use canape_core::collision::CollisionParams;
use canape_core::component::Role;
use canape_core::scene::InitContext;

/// Warn when `what` makes Lagrangian contact constraints but the root's animation loop is not
/// FreeMotionAnimationLoop (the only one that solves them).
pub fn check_free_motion(ctx: &mut InitContext<'_>, what: &str) {
    check_loop(ctx, || {
        format!("{what} makes Lagrangian contact constraints, which only FreeMotionAnimationLoop solves: with this animation loop contacts get no response")
    });
}

/// Warn `message` when the root's animation loop is not FreeMotionAnimationLoop.
pub fn check_loop(ctx: &mut InitContext<'_>, message: impl FnOnce() -> String) {
    let scene = ctx.scene;
    let root_loop = scene
        .node_components(scene.root(), Role::AnimationLoop)
        .next()
        .map(|c| scene.info(c).class);
    if root_loop != Some("FreeMotionAnimationLoop") {
        ctx.warn(message());
    }
}

/// How a pair's contacts are answered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ResponseKind {
    /// PenalityContactForceField (BarycentricPenalityContact).
    Penalty,
    /// StickContactForceField springs; whether they outlive the contacts (`keepAlive`).
    Stick { keep_alive: bool },
    /// FrictionContactConstraint rows (friction coefficient `mu`, tolerance `tol`), solved by
    /// the augmented Lagrangian block resolution with penalty `epsilon` for
    /// AugmentedLagrangianResponseConstraint.
    Friction {
        mu: f64,
        tol: f64,
        epsilon: Option<f64>,
    },
}

impl ResponseKind {
    /// Whether its contacts are Lagrangian constraints (solved by FreeMotionAnimationLoop).
    pub fn is_lagrangian(&self) -> bool {
        matches!(self, ResponseKind::Friction { .. })
    }
}

/// What parsing a response or the rules reports.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResponseError {
    #[error("contact response '{name}' is not implemented yet (PenalityContactForceField, StickContactForceField, FrictionContactConstraint and AugmentedLagrangianResponseConstraint are): contacts get no response")]
    Unknown { name: String },
    #[error("responseParams '{part}' is not understood (StickContactForceField takes keepAlive=0 or 1): ignored")]
    StickParameter { part: String },
    #[error("responseParams '{part}' is not understood ({name} takes mu=…{epsilon} and tol=…, non-negative): ignored", epsilon = if *.augmented { ", epsilon=…" } else { "" })]
    FrictionParameter {
        part: String,
        name: &'static str,
        augmented: bool,
    },
    #[error("responseParams '{part}' is not understood (PenalityContactForceField takes no parameter): ignored")]
    PenaltyParameter { part: String },
    #[error("rules: '{rest}' is not a whole rule (two model names, group numbers or *, then a response): ignored")]
    PartialRule { rest: String },
    #[error("rules: the response '{response}' uses variables ($name$), which are not supported: the rule is ignored")]
    Variables { response: String },
}

/// Parse a response as SOFA writes it: a class name, then optionally `?var=value&var=value`.
/// Parameters not understood are reported and ignored, as SOFA ignores Data it does not find;
/// an unknown class gives no response.
pub fn parse(text: &str) -> (Option<ResponseKind>, Vec<ResponseError>) {
    let text = text.trim();
    let (name, params) = text.split_once('?').unwrap_or((text, ""));
    let mut errors = Vec::new();
    let parts = params
        .split(['&', '?'])
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let kind = match name.trim() {
        // CollisionResponse::createNewContacts: a pair deliberately left without response
        "nullptr" => return (None, errors),
        "PenalityContactForceField" | "default" | "BarycentricPenalityContact" => {
            errors.extend(parts.map(|p| ResponseError::PenaltyParameter {
                part: p.to_string(),
            }));
            ResponseKind::Penalty
        }
        "StickContactForceField" => {
            let mut keep_alive = true;
            for part in parts {
                let (k, v) = part.split_once('=').unwrap_or((part, ""));
                match (k.trim(), v.trim()) {
                    ("keepAlive", "1" | "true") => keep_alive = true,
                    ("keepAlive", "0" | "false") => keep_alive = false,
                    _ => errors.push(ResponseError::StickParameter {
                        part: part.to_string(),
                    }),
                }
            }
            ResponseKind::Stick { keep_alive }
        }
        name @ ("FrictionContactConstraint" | "AugmentedLagrangianResponseConstraint") => {
            let augmented = name == "AugmentedLagrangianResponseConstraint";
            let name = if augmented {
                "AugmentedLagrangianResponseConstraint"
            } else {
                "FrictionContactConstraint"
            };
            // FrictionContact's mu defaults to 0.8, AugmentedLagrangianResponse's to 0
            let (mut mu, mut tol, mut epsilon) = (if augmented { 0.0 } else { 0.8 }, 0.0, 0.0);
            for part in parts {
                let (k, v) = part.split_once('=').unwrap_or((part, ""));
                match (k.trim(), v.trim().parse::<f64>()) {
                    ("mu", Ok(x)) if x >= 0.0 && x.is_finite() => mu = x,
                    ("tol", Ok(x)) if x >= 0.0 && x.is_finite() => tol = x,
                    ("epsilon", Ok(x)) if augmented && x >= 0.0 && x.is_finite() => epsilon = x,
                    _ => errors.push(ResponseError::FrictionParameter {
                        part: part.to_string(),
                        name,
                        augmented,
                    }),
                }
            }
            ResponseKind::Friction {
                mu,
                tol,
                epsilon: augmented.then_some(epsilon),
            }
        }
        other => {
            errors.push(ResponseError::Unknown {
                name: other.to_string(),
            });
            return (None, errors);
        }
    };
    (Some(kind), errors)
}

/// One side of a rule: a model name (`*`: any model) or a group number.
#[derive(Clone, Debug, PartialEq)]
enum Side {
    Name(String),
    Group(i64),
}

impl Side {
    fn read(word: &str) -> Side {
        // SOFA: a word of digits and minus signs only is a group number, read by atoi (its
        // leading integer: "12-3" is 12, "-" is 0)
        if !word.chars().all(|c| c == '-' || c.is_ascii_digit()) {
            return Side::Name(word.to_string());
        }
        let (sign, digits) = match word.strip_prefix('-') {
            Some(rest) => (-1, rest),
            None => (1, word),
        };
        let end = digits
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        Side::Group(sign * digits[..end].parse::<i64>().unwrap_or(0))
    }

    fn matches(&self, name: &str, params: &CollisionParams) -> bool {
        match self {
            Side::Name(n) => n == "*" || n == name,
            Side::Group(g) => params.group.contains(g),
        }
    }
}

/// One of RuleBasedContactManager's rules.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    sides: [Side; 2],
    /// The response, `None` when its class is unknown (the pair then gets no response).
    pub kind: Option<ResponseKind>,
}

impl Rule {
    /// Whether the rule matches the models (name, parameters) in this order.
    fn matches(&self, a: (&str, &CollisionParams), b: (&str, &CollisionParams)) -> bool {
        self.sides[0].matches(a.0, a.1) && self.sides[1].matches(b.0, b.1)
    }
}

/// RuleBasedContactManager's `rules`: whitespace-separated triplets (SOFA reads them as a
/// vector of rules and stops at the first incomplete one: `rules="default"` is no rule).
pub fn parse_rules(text: &str) -> (Vec<Rule>, Vec<ResponseError>) {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    let mut chunks = words.chunks_exact(3);
    for w in &mut chunks {
        if w[2].contains('$') {
            errors.push(ResponseError::Variables {
                response: w[2].to_string(),
            });
            continue;
        }
        let (kind, e) = parse(w[2]);
        errors.extend(e);
        rules.push(Rule {
            sides: [Side::read(w[0]), Side::read(w[1])],
            kind,
        });
    }
    let rest = chunks.remainder();
    // a lone "default" is how SOFA's own scene writes "no rule"
    if !rest.is_empty() && rest != ["default"] {
        errors.push(ResponseError::PartialRule {
            rest: rest.join(" "),
        });
    }
    (rules, errors)
}

/// A model's own `contactResponse`, parsed at the model's init.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnResponse {
    /// As written (CollisionResponse compares the two models' texts).
    pub text: String,
    pub kind: Option<ResponseKind>,
}

/// The contact manager's choice, made once per model pair.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chooser {
    /// Whether there is a contact manager at all (without one, no pair gets a response, not
    /// even from its models' own `contactResponse`: SOFA's manager makes the contacts).
    pub manager: bool,
    /// The manager's response (with its `responseParams`); `None` when there is no manager or
    /// its response is unknown.
    pub default: Option<ResponseKind>,
    /// RuleBasedContactManager (its precedence and rules) rather than CollisionResponse.
    pub rule_based: bool,
    pub rules: Vec<Rule>,
}

/// A model as the chooser sees it: its name, parameters and own response.
pub type ModelView<'a> = (&'a str, &'a CollisionParams, Option<&'a OwnResponse>);

impl Chooser {
    /// The response of the pair (first, second), in the detection's order.
    pub fn choose(&self, a: ModelView<'_>, b: ModelView<'_>) -> Option<ResponseKind> {
        if !self.manager {
            return None;
        }
        match (a.2, b.2) {
            (Some(ra), _) if self.rule_based => return ra.kind,
            (None, Some(rb)) if self.rule_based => return rb.kind,
            (Some(ra), None) => return ra.kind,
            (None, Some(rb)) => return rb.kind,
            (Some(ra), Some(rb)) if ra.text == rb.text => return ra.kind,
            _ => {}
        }
        if self.rule_based {
            let (na, nb) = ((a.0, a.1), (b.0, b.1));
            if let Some(r) = self
                .rules
                .iter()
                .find(|r| r.matches(na, nb) || r.matches(nb, na))
            {
                return r.kind;
            }
        }
        self.default
    }

    /// Whether some pair may get a Lagrangian response from the manager.
    pub fn any_lagrangian(&self) -> bool {
        self.default.is_some_and(|k| k.is_lagrangian())
            || self
                .rules
                .iter()
                .any(|r| r.kind.is_some_and(|k| k.is_lagrangian()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(groups: &[i64]) -> CollisionParams {
        CollisionParams {
            group: groups.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn a_response_takes_its_parameters_after_a_question_mark() {
        let (k, e) = parse("FrictionContactConstraint?mu=0.3&tol=1e-4");
        assert_eq!(
            k,
            Some(ResponseKind::Friction {
                mu: 0.3,
                tol: 1e-4,
                epsilon: None
            })
        );
        assert!(e.is_empty());
        let (k, e) = parse("AugmentedLagrangianResponseConstraint?epsilon=2&mu=-1");
        assert_eq!(
            k,
            Some(ResponseKind::Friction {
                mu: 0.0,
                tol: 0.0,
                epsilon: Some(2.0)
            })
        );
        assert_eq!(e.len(), 1);
        assert_eq!(
            e[0].to_string(),
            "responseParams 'mu=-1' is not understood (AugmentedLagrangianResponseConstraint takes mu=…, epsilon=… and tol=…, non-negative): ignored"
        );
        assert_eq!(
            parse("StickContactForceField?keepAlive=0").0,
            Some(ResponseKind::Stick { keep_alive: false })
        );
        let (k, e) = parse("Sticky");
        assert_eq!(k, None);
        assert_eq!(e[0].to_string(), "contact response 'Sticky' is not implemented yet (PenalityContactForceField, StickContactForceField, FrictionContactConstraint and AugmentedLagrangianResponseConstraint are): contacts get no response");
    }

    #[test]
    fn rules_are_triplets_by_name_group_or_wildcard_and_the_first_match_wins() {
        let (rules, e) = parse_rules(
            "Floor 3 StickContactForceField  * Ball FrictionContactConstraint?mu=0  * * PenalityContactForceField",
        );
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(rules.len(), 3);
        let c = Chooser {
            manager: true,
            default: None,
            rule_based: true,
            rules,
        };
        let (g3, g0) = (params(&[3]), params(&[]));
        let stick = Some(ResponseKind::Stick { keep_alive: true });
        // either way round
        assert_eq!(c.choose(("Floor", &g0, None), ("x", &g3, None)), stick);
        assert_eq!(c.choose(("x", &g3, None), ("Floor", &g0, None)), stick);
        // Floor with a model outside group 3 falls to the wildcard rules
        let friction = Some(ResponseKind::Friction {
            mu: 0.0,
            tol: 0.0,
            epsilon: None,
        });
        assert_eq!(
            c.choose(("Floor", &g0, None), ("Ball", &g0, None)),
            friction
        );
        assert_eq!(
            c.choose(("a", &g0, None), ("b", &g0, None)),
            Some(ResponseKind::Penalty)
        );
        // SOFA's own "default" is no rule; an incomplete rule is reported
        assert_eq!(parse_rules("default"), (Vec::new(), Vec::new()));
        let (r, e) = parse_rules("a b");
        assert!(r.is_empty());
        assert_eq!(e[0].to_string(), "rules: 'a b' is not a whole rule (two model names, group numbers or *, then a response): ignored");
    }

    #[test]
    fn a_models_own_response_comes_first_as_each_manager_says() {
        let p = params(&[]);
        let own = |t: &str| OwnResponse {
            text: t.to_string(),
            kind: parse(t).0,
        };
        let (stick, pen) = (
            own("StickContactForceField"),
            own("PenalityContactForceField"),
        );
        let default = Some(ResponseKind::Friction {
            mu: 0.8,
            tol: 0.0,
            epsilon: None,
        });
        let plain = Chooser {
            manager: true,
            default,
            ..Default::default()
        };
        // CollisionResponse: one set, or both the same, else the manager's
        assert_eq!(
            plain.choose(("a", &p, None), ("b", &p, Some(&stick))),
            stick.kind
        );
        assert_eq!(
            plain.choose(("a", &p, Some(&stick)), ("b", &p, Some(&stick))),
            stick.kind
        );
        assert_eq!(
            plain.choose(("a", &p, Some(&stick)), ("b", &p, Some(&pen))),
            default
        );
        assert_eq!(plain.choose(("a", &p, None), ("b", &p, None)), default);
        // RuleBasedContactManager: the first model's, then the second's
        let ruled = Chooser {
            rule_based: true,
            ..plain
        };
        assert_eq!(
            ruled.choose(("a", &p, Some(&stick)), ("b", &p, Some(&pen))),
            stick.kind
        );
        assert_eq!(
            ruled.choose(("a", &p, None), ("b", &p, Some(&pen))),
            pen.kind
        );
    }
}
