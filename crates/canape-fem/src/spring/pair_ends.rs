//! The two states of a pair interaction force field ([`PairEnds`]): the `object1`/`object2`
//! links resolved and checked.

use canape_core::data::DataTable;
use canape_core::scene::InitContext;

/// The two states of a pair interaction force field (SOFA's PairInteractionForceField:
/// `object1`, `object2`, each a state or a node whose state is meant, the context state when
/// empty), checked to be of `dof` type.
pub struct PairEnds {
    pub states: [canape_core::scene::ComponentId; 2],
    /// Point counts of the two states.
    pub sizes: [usize; 2],
    /// Whether the force field acts on its vectors concatenated (two states, or one state that
    /// is not its context's); otherwise it acts on its context state alone.
    pub pair: bool,
}

impl PairEnds {
    /// The ends named by the `object1` and `object2` Data of `data`.
    pub fn resolve(
        ctx: &mut InitContext<'_>,
        data: &DataTable,
        dof: canape_types::DofType,
        class: &str,
    ) -> Option<PairEnds> {
        Self::resolve_links(ctx, [data.str("object1"), data.str("object2")], dof, class)
    }

    /// The ends named by the links `objects` (`object1`, `object2`).
    pub fn resolve_links(
        ctx: &mut InitContext<'_>,
        objects: [&str; 2],
        dof: canape_types::DofType,
        class: &str,
    ) -> Option<PairEnds> {
        let context = ctx.scene.context_state(ctx.node);
        let mut ends = [context; 2];
        for (k, (o, link)) in ["object1", "object2"].into_iter().zip(objects).enumerate() {
            let l = link.trim().to_string();
            if l.is_empty() {
                continue;
            }
            match ctx.link_state_or_node(o, &l) {
                Ok(Some(link)) => ends[k] = Some(link.id()),
                Ok(None) => {}
                Err(e) => {
                    ctx.error(e.to_string());
                    return None;
                }
            }
        }
        let [Some(a), Some(b)] = ends else {
            ctx.error("no MechanicalObject in the context (and no object1/object2 link)");
            return None;
        };
        let sa = ctx.scene.state(a).expect("state");
        let sb = ctx.scene.state(b).expect("state");
        for (s, id) in [(sa, a), (sb, b)] {
            if s.dof != dof {
                ctx.error(format!(
                    "{class} acts on {} states; {} is {}",
                    dof.name(),
                    ctx.scene.component_label(id),
                    s.dof.name()
                ));
                return None;
            }
        }
        Some(PairEnds {
            states: [a, b],
            sizes: [sa.size(), sb.size()],
            // one state that is not the context's: an interaction of the state with itself,
            // its vectors given twice
            pair: a != b || Some(a) != context,
        })
    }
}
