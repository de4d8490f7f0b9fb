locals {
  name = req.composite.metadata.name
}

resource script {
  body = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata   = { name = "${name}-script" }
    data = {
      "plain.sh" = <<EOT
#!/bin/sh
echo "hello ${name}"
  indented line
EOT
      "indented.sh" = <<-EOT
        #!/bin/sh
        echo "stripped"
          keeps relative indent
        EOT
      "directive.txt" = <<-EOT
        %{ for p in ["a", "b"] ~}
        item ${p}
        %{ endfor ~}
        done
      EOT
      "nochomp.txt" = chomp(<<EOT
last line
EOT
      )
    }
  }
}
