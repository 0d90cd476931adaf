//! Tests of the world-frame stiffness product: the AVX2 loop gives the scalar loop's bits.

use super::*;

/// The AVX2 product gives the scalar loop's bits, on whole and partial ranges, with one
/// shared material and with one material per element.
#[test]
fn dispatched_product_is_bit_identical() {
    let mut seed = 99u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let nodes = 12;
    let mut world = WorldBlocks::default();
    for e in 0..11u32 {
        world.push(WorldElem {
            idx: [e % 12, (e + 1) % 12, (e + 5) % 12, (e + 7) % 12],
            gw: std::array::from_fn(|_| std::array::from_fn(|_| rnd())),
        });
    }
    let shared = vec![Material::new(1000.0, 0.3, 1.0)];
    let per: Vec<Material> = (0..11)
        .map(|e| Material::new(500.0 + 10.0 * e as f64, 0.25, 1.0))
        .collect();
    let dx: Vec<f64> = (0..3 * nodes).map(|_| rnd()).collect();
    for mats in [&shared, &per] {
        for range in [0..11, 3..9, 5..6] {
            let mut a = vec![0.0; 3 * nodes];
            let mut b = vec![0.0; 3 * nodes];
            dforce_range(&world, mats, range.clone(), &dx, &mut a, 0, -0.3);
            dforce_range_dispatch(&world, mats, range, &dx, &mut b, 0, -0.3);
            assert!(a.iter().any(|v| *v != 0.0));
            assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        }
        // a thread's part: elements 2..5 touch nodes 2..=11 only, into a buffer from node 2
        // (the node checks then run block by block)
        let mut a = vec![0.0; 3 * (nodes - 2)];
        let mut b = vec![0.0; 3 * (nodes - 2)];
        dforce_range(&world, mats, 2..5, &dx, &mut a, 2, -0.3);
        dforce_range_dispatch(&world, mats, 2..5, &dx, &mut b, 2, -0.3);
        assert!(a.iter().any(|v| *v != 0.0));
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}
