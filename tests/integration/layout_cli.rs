//! `stridelab layout` run as a real binary: the README's example commands, every error kind,
//! integer arithmetic in the expression, and the human explanation.

use crate::common;

use std::process::Output;

use serde_json::{Value, json};

fn run(args: &[&str]) -> Output {
    common::stridelab_command()
        .arg("layout")
        .args(args)
        .output()
        .expect("the stridelab binary runs")
}

fn json_of(expr: &str) -> (Value, i32) {
    let out = run(&["--json", expr]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "exactly one line: {stdout}");
    let value: Value = serde_json::from_str(&stdout).expect("stdout is one JSON object");
    (value, out.status.code().unwrap())
}

#[test]
fn transpose_json_is_an_f_contiguous_view_of_shared_storage() {
    let (mut value, code) = json_of("arange(12).view(3,4).T");
    assert_eq!(code, 0);
    // The cache analysis (every data level of this machine, or why there is none) joins the
    // view's fields.
    let object = value.as_object_mut().unwrap();
    let caches = object.remove("caches").unwrap();
    assert!(caches.as_array().is_some_and(|c| !c.is_empty()), "{caches}");
    assert!(object.remove("geometry_source").unwrap().is_string());
    assert!(object.remove("warnings").unwrap().is_array());
    assert_eq!(
        value,
        json!({"expr": "arange(12).view(3,4).T", "shape": [4,3], "strides": [1,4], "offset": 0,
               "storage_len": 12, "shares_storage": true, "c_contiguous": false,
               "f_contiguous": true, "values": [0,4,8,1,5,9,2,6,10,3,7,11],
               "values_total": 12, "values_truncated": false})
    );
}

#[test]
fn view_of_a_transpose_is_view_incompatible_and_names_reshape() {
    let (value, code) = json_of("arange(12).view(3,4).T.view(12)");
    assert_eq!(code, 2);
    assert_eq!(value["error"]["kind"], "view_incompatible");
    let message = value["error"]["message"].as_str().unwrap();
    assert!(message.contains("reshape"), "{message}");
    assert_eq!(value.as_object().unwrap().len(), 1);
}

#[test]
fn every_error_kind_is_reported_in_json_with_exit_2() {
    let cases = [
        ("arange(12).view(3,,4)", "parse"),
        ("arange(12).frobnicate()", "parse"),
        ("arange(12).view(3,4).transpose(0, 2)", "invalid_dim"),
        ("arange(12).view(3,4)[3]", "out_of_bounds"),
        ("arange(12).as_strided((4,), (4,), 0)", "out_of_bounds"),
        ("arange(12).view(5, -1)", "shape_mismatch"),
        ("arange(12).view(3,4).expand(2, 4)", "shape_mismatch"),
        ("arange(12)[::0]", "invalid_argument"),
        ("arange(99999999999999999999999)", "overflow"),
        (
            "arange(4).as_strided((9223372036854775807, 4), (1, 1), 0)",
            "overflow",
        ),
        ("arange(999999999999)", "too_large"),
    ];
    for (expr, kind) in cases {
        let (value, code) = json_of(expr);
        assert_eq!(code, 2, "{expr}");
        assert_eq!(value["error"]["kind"], kind, "{expr}: {value}");
        assert!(!value["error"]["message"].as_str().unwrap().is_empty());
    }
}

#[test]
fn copies_report_shares_storage_false_and_the_copied_storage() {
    let (value, code) = json_of("arange(6).view(2,3).t().contiguous()");
    assert_eq!(code, 0);
    assert_eq!(value["shares_storage"], false);
    assert_eq!(value["strides"], json!([2, 1]));
    assert_eq!(value["values"], json!([0, 3, 1, 4, 2, 5]));
    let (value, _) = json_of("arange(6).view(2,3)[:, ::-1]");
    assert_eq!(value["strides"], json!([3, -1]));
    assert_eq!(value["offset"], 2);
    assert_eq!(value["values"], json!([2, 1, 0, 5, 4, 3]));
}

#[test]
fn whitespace_and_tuple_forms_are_accepted() {
    let (a, _) = json_of(" arange( 12 ) . view( (3 , 4) ) . T ");
    let (b, _) = json_of("arange(12).view(3,4).T");
    assert_eq!(a["strides"], b["strides"]);
    let (d, code) = json_of("arange(54).view(6,9).diagonal(offset=-1, dim1=0, dim2=1)");
    assert_eq!(code, 0);
    assert_eq!(d["strides"], json!([10]));
    assert_eq!(d["offset"], 9);
}

#[test]
fn human_output_explains_the_view() {
    let out = run(&["arange(12).view(3,4).T"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "shape     [4, 3]",
        "strides   [1, 4]",
        "loc = 0 + 1·i0 + 4·i1",
        "C-contiguous  no: dim 1 (size 3) has stride 4, but C order needs 1",
        "F-contiguous  yes",
        "visit    0   3   6   9   1   4   7  10   2   5   8  11",
        "no data was copied",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn human_errors_go_to_stderr_with_exit_2() {
    let out = run(&["arange(12).view(3,4).T.view(12)"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("reshape"), "{err}");

    let out = run(&["arange(12).view(3 4)"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("column 19") && err.contains('^'), "{err}");
}

#[test]
fn batch_mode_prints_one_object_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("exprs.txt");
    std::fs::write(
        &path,
        "arange(4).flip(0)\narange(4).view(5)\n\narange(4)[1:]\n",
    )
    .unwrap();
    let out = run(&["--batch", path.to_str().unwrap()]);
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["values"], json!([3, 2, 1, 0]));
    assert_eq!(lines[1]["error"]["kind"], "shape_mismatch");
    assert_eq!(lines[2]["offset"], 1);
}

#[test]
fn integers_in_the_expression_may_be_arithmetic_and_an_overflow_points_at_its_column() {
    let (value, code) =
        json_of("arange(32*64*56*56).view(32, 64, 56*56)[:, :, (56-1)*56 : 56*56 : 56//2]");
    assert_eq!(code, 0, "{value}");
    assert_eq!(value["shape"], json!([32, 64, 2]));
    assert_eq!(value["strides"], json!([200704, 3136, 28]));
    assert_eq!(value["offset"], 3080);
    let text = "arange(4294967296*4294967296)";
    let out = run(&[text]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("arithmetic overflow at column 18: 4294967296 * 4294967296 does not fit"),
        "{err}"
    );
    assert!(
        err.contains(&format!("  {text}\n  {}^", " ".repeat(17))),
        "{err}"
    );
    let (value, code) = json_of(text);
    assert_eq!(
        (code, value["error"]["kind"].as_str()),
        (2, Some("overflow"))
    );
    let (value, code) = json_of("arange(12).view(3, 4//0)");
    assert_eq!(code, 2);
    assert_eq!(value["error"]["kind"], "invalid_argument", "{value}");
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at column 21: 4 // 0 divides by zero"),
        "{value}"
    );
}
