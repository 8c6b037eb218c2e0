from smevals.cli import main

main()
