//! The model file: read back, ignored when foreign, refused when not a model or hostile.

use super::*;
use crate::results::time_model::tests::sample_machine_model;

fn this_machine_model(machine: &Geometry) -> MachineModel {
    MachineModel {
        cpu_model: cpu_model().unwrap_or_else(|| "unknown".into()),
        geometry: probe::geometry_key(machine),
        ..sample_machine_model()
    }
}

#[test]
fn a_saved_model_loads_back_and_a_foreign_one_is_ignored() {
    let machine = Geometry::detect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join(MODEL_FILE_NAME);
    assert!(matches!(
        load_model_file(&path, &machine),
        Ok(Stored::Missing)
    ));
    let model = this_machine_model(&machine);
    // A named path's missing directory is not created; the default location's is.
    assert!(save_model_file(&path, &model, false).is_err());
    save_model_file(&path, &model, true).unwrap();
    match load_model_file(&path, &machine) {
        Ok(Stored::Usable(back)) => assert_eq!(*back, model),
        other => panic!("{other:?}"),
    }
    // Only the file is left: the temporary was renamed onto it.
    assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    let foreign = MachineModel {
        cpu_model: "Another CPU".into(),
        ..model
    };
    save_model_file(&path, &foreign, false).unwrap();
    match load_model_file(&path, &machine) {
        Ok(Stored::Foreign(why)) => assert!(why.contains("Another CPU"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn files_that_are_not_models_are_refused_naming_the_problem() {
    let machine = Geometry::detect();
    let dir = tempfile::tempdir().unwrap();
    let mut negative = serde_json::to_value(this_machine_model(&machine)).unwrap();
    negative["memory"]["read_bytes_per_s"]["low"] = serde_json::json!(-1.0);
    let cases: Vec<(String, &str)> = vec![
        ("{ not json".into(), "is not a stridelab machine model"),
        ("{\"plans\": []}".into(), "is not a stridelab machine model"),
        (negative.to_string(), "`model.memory.read_bytes_per_s`"),
        (" ".repeat(2 << 20), "more than a model file's"),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("{i}.json"));
        fs::write(&path, text).unwrap();
        let err = load_model_file(&path, &machine).expect_err("refused");
        assert!(err.to_string().contains(expected), "case {i}: {err}");
        // Refused, and left exactly as it was.
        assert_eq!(&fs::read_to_string(&path).unwrap(), text);
    }
}

#[test]
fn the_flag_names_off_a_file_or_the_default() {
    assert_eq!(ModelChoice::from_flag(Some("off".into())), ModelChoice::Off);
    assert_eq!(
        ModelChoice::from_flag(Some("m.json".into())),
        ModelChoice::File("m.json".into())
    );
    let missing = ModelChoice::File("/no/such/dir/m.json".into());
    assert!(matches!(
        check_model_directory(&missing),
        Err(ModelFileError::MissingDirectory { .. })
    ));
}
