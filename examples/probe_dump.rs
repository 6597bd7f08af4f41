use std::time::Duration;
use stridelab::harness::probe::*;
fn main() {
    let what = std::env::args().nth(1).unwrap_or_default();
    eprintln!("pinned: {}", pin_current_thread());
    let t = std::time::Instant::now();
    let b = ProbeBudget::new(5, Duration::from_secs(30));
    if what == "cap" {
        let mut sizes = vec![];
        let mut s = 4096usize;
        while s <= 64 << 20 {
            for q in [4, 5, 6, 7] {
                let v = s / 4 * q;
                if v % 64 == 0 {
                    sizes.push(v)
                }
            }
            s *= 2;
        }
        let p = CapacityProbe::new(&sizes, 65536, 1).unwrap();
        eprintln!("built {:?}", t.elapsed());
        let c = &p.chases()[p.chases().len() - 1];
        eprintln!(
            "huge {:?} of {}",
            huge_page_bytes(&[(c.address(), c.bytes())]),
            c.bytes()
        );
        for pt in p.run(b, 200_000) {
            println!("{:>10} {:8.2} {:.3}", pt.x, pt.ns, pt.spread);
        }
    } else if what == "line" {
        let st = [8, 16, 32, 64, 128, 256, 512, 1024];
        let p = LinePairProbe::new(
            &st,
            std::env::args()
                .nth(2)
                .map(|a| a.parse().unwrap())
                .unwrap_or(256 << 10),
            1,
        )
        .unwrap();
        for pt in p.run(b, 200_000) {
            println!("{:>10} {:8.2} {:.3}", pt.x, pt.ns, pt.spread);
        }
    } else if what == "conf" {
        for s in [
            1024usize, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 32768, 65536, 131072,
        ] {
            let mut p = ConflictProbe::new(s, 40, true, 1).unwrap();
            let mut c = ConflictProbe::new(s + 64, 40, true, 2).unwrap();
            let (a, bb) = run_conflict_pair(&mut p, &mut c, b, 20_000);
            let line: Vec<String> = a
                .iter()
                .zip(&bb)
                .map(|(x, y)| format!("{:.1}/{:.1}", x.ns, y.ns))
                .collect();
            println!("{s}: {}", line.join(" "));
        }
    } else if what == "tlb" {
        let ks: Vec<usize> = (1..=64).map(|i| i * 4).collect();
        let mut s = TlbProbe::new(&ks, 64, 4096, false, 1).unwrap();
        let mut h = TlbProbe::new(&ks, 64, 4096, true, 1).unwrap();
        eprintln!(
            "huge small={:?} huge={:?}",
            huge_page_bytes(&[s.span()]),
            huge_page_bytes(&[h.span()])
        );
        let (a, bb) = run_tlb_pair(&mut s, &mut h, b, 20_000);
        for (x, y) in a.iter().zip(&bb) {
            println!("{:>5} {:6.2} {:6.2}", x.x, x.ns, y.ns);
        }
    }
    eprintln!("took {:?}", t.elapsed());
}
