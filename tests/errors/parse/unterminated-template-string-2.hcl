a = <<EOT
hello