//! A mass's matrix-free product equals the product by the matrix it assembles (MeshMatrixMass
//! sums its edges node by node in `add_mdx`, entry by entry in `add_m_to_matrix`).

use canape::core::matrix::{MatrixSink, Triplets};
use canape::{load_scene_str, LoadOptions};

#[test]
fn mesh_matrix_mass_product_equals_its_assembled_matrix() {
    for (topology, extra) in [
        ("", ""),
        (
            r#"<TetrahedronSetTopologyContainer name="tetra"/>
               <Hexa2TetraTopologicalMapping input="@grid" output="@tetra"/>"#,
            r#"topology="@tetra""#,
        ),
    ] {
        let scene = format!(
            r#"<Node name="root" dt="0.01">
                 <DefaultAnimationLoop/>
                 <Node name="body">
                   <EulerImplicitSolver/>
                   <CGLinearSolver/>
                   <RegularGridTopology name="grid" n="3 4 5" min="0 0 0" max="1 2 3"/>
                   <MechanicalObject/>
                   {topology}
                   <MeshMatrixMass massDensity="2" {extra}/>
                 </Node>
               </Node>"#
        );
        let sim = load_scene_str(
            &scene,
            "mass.scn",
            &std::env::temp_dir(),
            &LoadOptions::default(),
        )
        .unwrap();
        assert!(sim.diagnostics.is_empty(), "{:?}", sim.diagnostics);
        let mass = sim.scene.masses[0].as_ref().unwrap();
        let n = 3 * 60;
        let dx: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
        let start: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).cos()).collect();
        let mut res = start.clone();
        mass.add_mdx(&mut res, &dx, 0.8);
        let mut t = Triplets::new(n);
        mass.add_m_to_matrix(&mut t as &mut dyn MatrixSink, 0.8, 0);
        let a = t.to_csr();
        let mut want = vec![0.0; n];
        a.mul(&dx, &mut want);
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 1e-3);
        // off-diagonal entries are there: the matrix is not the lumped diagonal
        assert!(a.vals.len() > n);
        for i in 0..n {
            let got = res[i] - start[i];
            assert!(
                (got - want[i]).abs() <= 1e-13 * scale,
                "{topology}: entry {i}: {got} vs {}",
                want[i]
            );
        }
    }
}
