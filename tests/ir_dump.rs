//! Golden dumps of the IR (`ir::dump`): how scopes were resolved to frame slots, locals in
//! evaluation order, errors deferred to where Go raises them, and static types.

use fn_hcl::lower::ir::{compile_files, dump};

fn dumped(src: &str) -> String {
    let files = vec![("main.hcl".to_string(), src.to_string())];
    match compile_files(&files) {
        Ok(p) => dump(&p),
        Err(e) => panic!("load failed: {}", e.message()),
    }
}

#[test]
fn scopes_and_slots() {
    insta::assert_snapshot!(dumped(
        r#"locals {
  name   = "${prefix}-app"
  prefix = req.composite.metadata.name
  count  = length(zones)
  zones  = ["a", "b"]
}

resource bucket {
  locals {
    region = "us-east-1"
    tags   = { app = name, region = region }
  }
  condition = count > 1
  body = {
    apiVersion = "s3.aws.upbound.io/v1beta1"
    kind       = "Bucket"
    metadata   = { name = "${name}-${self.name}" }
    spec       = { forProvider = { region = region, tags = tags } }
  }
  composite status {
    body = { bucket = self.resource.status }
  }
  ready {
    value = "READY_TRUE"
  }
}

resources subnets {
  for_each = { for z in zones : z => upper(z) }
  name     = "subnet-${each.key}"
  locals {
    n = length(self.resources)
  }
  template {
    locals {
      zone = each.value
    }
    body = {
      apiVersion = "ec2.aws.upbound.io/v1beta1"
      kind       = "Subnet"
      metadata   = { name = zone }
      spec       = { zone = zone, index = n, ok = true ? 1 : "x" }
    }
  }
}

context {
  key   = "apiextensions.crossplane.io/environment"
  value = { zones = tolist(zones) }
}
"#
    ));
}

#[test]
fn nested_groups_reuse_sibling_slots() {
    insta::assert_snapshot!(dumped(
        r#"locals {
  env = "prod"
}
group {
  condition = env == "prod"
  locals {
    a = 1
  }
  group {
    locals {
      b = a + 1
    }
    resource r1 {
      body = { b = b }
    }
  }
}
group {
  locals {
    c = "${env}-c"
  }
  resource r2 {
    body = { c = c }
  }
}
requirement cfg {
  select {
    apiVersion = "v1"
    kind       = "ConfigMap"
    matchName  = env
  }
}
"#
    ));
}

#[test]
fn deferred_errors_and_analysis() {
    insta::assert_snapshot!(dumped(
        r#"locals {
  ok = 1
}
resource good {
  body = { v = ok, w = nmae }
}
resource bad {
  body  = {}
  count = 2
}
group {
  locals {
    ok = 2
  }
  resource unreached {
    body = {}
  }
}
composite stats {
  body = { a = upper([1]) }
}
resources xs {
  for_each = [1]
}
"#
    ));
}

#[test]
fn functions_and_invoke() {
    insta::assert_snapshot!(dumped(
        r#"function greet {
  arg name {}
  arg greeting { default = "hello" }
  locals {
    text = "${greeting}, ${name}"
  }
  body = upper(text)
}
locals {
  msg = invoke("greet", { name = "world" })
  len = length(msg)
}
composite status {
  body = { msg = msg, len = len, yes = can(msg.x) }
}
"#
    ));
}
