"""English, German, French and Spanish, read word by word (see ``_lang``)."""

from __future__ import annotations

import re

from ._classes import Latin
from ._classes import word_set as _set

__all__ = ["DE", "EN", "ES", "FR"]


EN = Latin(
    code="en",
    function=_set(
        "a an the this that these those my your our his her its their i you we he she it they me "
        "him us them what which who whom whose when where why how is are was were be been being am "
        "do does did done have has had can could will would shall should may might must of in on at "
        "to for from with by about into over under between and or but so if then than as not no yes "
        "also too very there here any some all each every both one two three more most much many few "
        "less least other another such own same just only even still please tell give explain "
        "describe name list write make get go say said like really well now ever again s t don doesn "
        "didn isn aren wasn weren ll ve re d m up out off way kind sort lot"
    ),
    pronouns={
        **dict.fromkeys(["he", "him", "his", "himself", "she", "her", "hers", "herself"], "p"),
        **dict.fromkeys(["it", "its", "itself", "there"], "t"),
        **dict.fromkeys(["they", "them", "their", "theirs", "themselves"], "pl"),
    },
    possessive=_set("his her its their"),
    person_wh=_set("who whom whose someone somebody anyone anybody everyone everybody person"),
    determiners=_set(
        "a an the this that these those my your our some any each every one another which what "
        "two three four five several many few"
    ),
    definite=_set("the"),
    demonstrative=_set("this that these those such"),
    introducing=_set("a an one some any another which what two three four five several"),
    auxiliaries=_set(
        "do does did is are was were can could will would should shall may might has have had must"
    ),
    boundaries=_set(
        "and but or because when while if after before since although though so then whereas until once whether"
    ),
    expletive=re.compile(
        r"\b(?:is|was|would|will|does|did|can|could|isn't|wasn't)\s+it\s+(?:be\s+)?(?:\w+\s+){0,2}?"
        r"(?:to|that|if|whether|when)\b|\bit(?:'s|\s+is|\s+was|\s+will\s+be|\s+would\s+be)\s+"
        r"(?:\w+\s+){0,2}?(?:to|that|if|whether|when)\b|\b(?:does|did|will|would)\s+it\s+take\b|"
        r"\bit\s+takes?\b|\btime\s+is\s+it\b|\bhow\s+(?:far|long|late|early|cold|hot)\s+is\s+it\b|"
        r"\bit\s+(?:seems|appears|turns\s+out|rains|snows)\b|\bdoes\s+it\s+matter\b|"
        r"\bis\s+it\s+(?:true|possible|worth|ok|okay|safe|normal|legal|better|bad|wrong|rude|hard|easy)\b|"
        r"\bis\s+it\s+['\"‘“\x00]|"  # "is it 'affect' or 'effect'": which word is right
        # "it's worth learning X" (it: the learning), "is the JR Pass worth it" (it: the pass)
        r"\bit(?:'s|\s+is|\s+was)\s+(?:still\s+|really\s+)?worth\s+\w+ing\b|\bworth\s+it\b|"
        r"\bit(?:'s|\s+is|\s+was|\s+gets?)?\s+(?:so\s+|very\s+|always\s+)?(?:cold|hot|warm|dark|light|sunny|"
        r"rainy|windy|cloudy|humid|late|early|raining|snowing)\b|\bthere(?=\s+(?:is|are|was|were|will|would|"
        r"be|been|seems?|exists?|used|must|might|should|could|has|have|had)\b|'s)|"
        r"\b(?:is|are|was|were|will|would|be|been|isn't|aren't|wasn't|weren't)\s+there\b",
        re.IGNORECASE,
    ),
    demo_pronoun=re.compile(
        r"(?:\b(?:this|these|those)|(?:^|\b(?:is|was|does|did|do|about|of|with|for|from|to|in|use|"
        r"explain|translate|summarize|summarise|fix|rewrite|improve|make|and|or)\s+)that)\b"
        r"(?=\s*(?:[?.!,;:]|$|(?:is|was|are|were|does|did|do|mean|means|one|ones|work|works|happen|"
        r"happened|true|correct|right|wrong|again|too|also|in|into|for|as|with|from|to|on|at|by|better|"
        r"compare|compares|differ|differs|cost|costs|take|takes|affect|affects|relate|apply|applies|"
        r"matter|matters|change|changes|sound|sounds|seem|seems|"
        r"worse|more|less|so|and|or)\b))",
        re.IGNORECASE,
    ),
    generic=_set(
        "result results answer answers outcome sum total product output number numbers word words name "
        "title value figure choice pick suggestion recommendation response"
    ),
    restrictive=_set("of for"),
    ellipsis=re.compile(
        r"^\W*(?:and|or|also|what about|how about|same (?:for|with|question)|likewise|as well as)\b",
        re.IGNORECASE,
    ),
    frame_whole=re.compile(
        r"\b(?:rank|prioriti[sz]e|classify|categori[sz]e|compare|contrast)\b|"
        r"\b(?:order|sort|arrange|group|match|rate|score|grade)\s+(?:these|those|them|the following|"
        r"the (?:questions|items|list|answers)|all|both)\b|\bfrom (?:easiest|hardest|simplest|most|least|"
        r"best|worst|smallest|largest|lowest|highest|shortest|longest)\b|\bin order of\b|"
        r"\bwhich (?:one )?of (?:these|those|them|the following|the (?:questions|items|above|two|three))\b|"
        r"\bthe (?:two|three|four|five|six|\d+) (?:answers|words|results|replies|numbers|names)\b|"
        r"\b(?:choose|pick|select)\b[^.?!\n]{0,30}\b(?:one|best|easiest|hardest|among|between|of these|"
        r"of the following)\b|\b(?:the same|a single|one single|one and the same)\b[^.?!\n]{0,20}?"
        r"\b(?:word|answer|number|letter|emoji|name|phrase|sentence|response)\b|"
        r"\bone (?:word|answer|number) (?:for|that (?:answers|fits|covers)) (?:all|every|both|them)\b|"
        r"\bin (?:two|three|four|five|six|seven|eight|nine|ten|\d+) (?:parts|sections|chapters|acts|"
        r"stanzas|verses|paragraphs|scenes|episodes)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:write|compose|create|draft|tell|craft|produce|generate|build|design|invent)\b"
        r"(?: me| us)? (?:a|an|one|a single) (?!(?:\w+[ -]){0,2}(?:answer|reply|response|explanation|"
        r"definition|list)s?\b)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:each|every|separately|individually|respectively|one by one|per question)\b",
        re.IGNORECASE,
    ),
)

DE = Latin(
    code="de",
    function=_set(
        "der die das den dem des ein eine einen einem einer eines kein keine dieser diese dieses diesen "
        "diesem jener jene jenes mein meine dein deine unser unsere euer ich du wir ihr sie er es mich "
        "dich uns euch mir dir ihn ihm ihnen sein seine ist sind war waren wird werden wurde wurden hat "
        "haben hatte hatten kann können konnte soll sollte muss müssen darf mag möchte würde was wer wen "
        "wem wessen wie wo wann warum weshalb wieso welche welcher welches welchen welchem woher wohin "
        "wozu und oder aber denn weil wenn als ob dass doch auch noch nur schon sehr mehr viel viele "
        "nicht in im an am auf aus bei beim mit nach von vom zu zum zur für über unter vor hinter neben "
        "zwischen durch gegen ohne um bitte man nenne erkläre beschreibe gib sag schreibe hier dort da "
        "so dann jetzt heute gibt geht"
    ),
    pronouns={
        **dict.fromkeys(
            ["er", "ihn", "ihm", "sie", "sein", "seine", "seinen", "seinem", "seiner", "seines"],
            "x",
        ),
        **dict.fromkeys(["ihr", "ihre", "ihren", "ihrem", "ihrer", "ihres"], "x"),
        **dict.fromkeys(["es", "dort", "dorthin", "davon", "darüber", "darin", "daraus"], "t"),
        "ihnen": "pl",
    },
    possessive=_set("sein seine seinen seinem seiner seines ihr ihre ihren ihrem ihrer ihres"),
    person_wh=_set("wer wen wem wessen jemand jemanden jemandem person"),
    determiners=_set(
        "der die das den dem des ein eine einen einem einer eines dieser diese dieses diesen diesem "
        "jener jene jenes mein meine dein deine unser unsere welche welcher welches welchen welchem "
        "zwei drei vier einige mehrere"
    ),
    definite=_set("der die das den dem des im am zum zur vom beim ins"),
    demonstrative=_set(
        "dieser diese dieses diesen diesem jener jene jenes jenen jenem besagte besagten"
    ),
    introducing=_set(
        "ein eine einen einem einer eines welche welcher welches welchen welchem zwei drei einige mehrere"
    ),
    auxiliaries=_set(
        "ist sind war waren hat haben hatte wird werden wurde kann können soll sollte muss darf mag würde tut tun"
    ),
    boundaries=_set(
        "und aber oder weil wenn als ob dass während nachdem bevor obwohl sodass denn sondern"
    ),
    expletive=re.compile(
        r"\bgibt\s+es\b|\bes\s+gibt\b|\bwie\s+(?:spät|geht)\s+es\b|\bgeht\s+es\s+(?:um|darum)\b|"
        r"\b(?:es\s+(?:ist|war|wäre)|(?:ist|war|wäre)\s+es)\b[^.?!]{0,40}?\b(?:zu|dass|ob|wenn)\b|"
        r"\b(?:dauert|lohnt)\s+es\b|\bes\s+(?:dauert|lohnt|regnet|schneit|kommt\s+darauf\s+an)\b|"
        r"\bkommt\s+es\s+darauf\s+an\b|\b(?:(?:ist|war|wird)\s+es|es\s+(?:ist|war|wird))\b[^.?!]{0,30}?"
        r"\b(?:kalt|warm|heiß|dunkel|hell|spät|früh|windig|nass|trocken|neblig|sonnig)\b",
        re.IGNORECASE,
    ),
    demo_pronoun=re.compile(
        r"\b(?:das|dies|dieses|jenes)\b(?=\s*(?:[?.!,;:]|$|(?:ist|war|sind|bedeutet|heißt|kostet|macht|"
        r"funktioniert|stimmt|gut|schlecht|richtig|falsch|so)\b))",
        re.IGNORECASE,
    ),
    generic=_set(
        "ergebnis antwort zahl wort name titel summe wert resultat lösung vorschlag auswahl"
    ),
    restrictive=_set("von für des der"),
    ellipsis=re.compile(
        r"^\W*(?:und|oder|auch|ebenso|was ist mit|wie steht es mit|und was|dasselbe für|das gleiche für)\b",
        re.IGNORECASE,
    ),
    frame_whole=re.compile(
        r"\b(?:ordne|ordnet|ordnen|sortiere|sortiert|sortieren|reihe|bewerte|bewertet|vergleiche|"
        r"vergleicht|vergleichen|klassifiziere|gruppiere|kategorisiere)\b|"
        r"\bwelche[rs]?\s+(?:davon|der folgenden|dieser|von (?:diesen|ihnen|den folgenden))\b|"
        r"\b(?:wähle|wählt)\b[^.?!\n]{0,30}\b(?:eine[ns]?|die beste|den besten|aus|von diesen|unter)\b|"
        r"\bdie (?:zwei|drei|vier|fünf|\d+) (?:antworten|wörter|ergebnisse|zahlen|namen)\b|"
        r"\b(?:dasselbe|derselbe|dieselbe|denselben|demselben|das gleiche|die gleiche|den gleichen|"
        r"dem gleichen|dem selben|ein(?:em|en|e)? einzige[nmrs]?)\b[^.?!\n]{0,15}?"
        r"\b(?:wort|antwort|zahl|buchstaben|begriff)\b|"
        r"\bin (?:zwei|drei|vier|fünf|sechs|\d+) (?:teilen|abschnitten|kapiteln|akten|strophen|szenen)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:schreibe|schreib|schreibt|verfasse|erzähle|erfinde|erstelle|entwirf|dichte|gestalte)\b"
        r"(?: mir| uns)? (?:eine|einen|ein|ein einziges)\b(?![^.?!\n]{0,20}\bantwort)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:jeweils|jede[nrms]?|einzeln|getrennt|separat|nacheinander)\b", re.IGNORECASE
    ),
)

FR = Latin(
    code="fr",
    function=_set(
        "le la les l un une des du de d au aux ce cet cette ces mon ma mes ton ta tes notre nos votre "
        "vos son sa ses leur leurs je j tu il elle on nous vous ils elles me m te t se s lui eux y en "
        "qui que qu quoi quel quelle quels quelles lequel laquelle lesquels lesquelles où quand comment "
        "pourquoi combien est sont était étaient été être a ont avait avaient avoir fait faire font "
        "fut furent sera seront serait seraient peut peuvent peux pouvez doit doivent dois va vont "
        "et ou mais donc car si comme ne pas plus moins très aussi dans "
        "sur sous avec pour par sans entre vers chez c ça cela ceci"
    ),
    pronouns={
        **dict.fromkeys(["il", "elle", "lui", "son", "sa", "ses"], "x"),
        **dict.fromkeys(["ils", "elles", "eux", "leur", "leurs"], "pl"),
        **dict.fromkeys(["celui", "celle", "ceux", "celles", "cela", "ça", "ceci"], "t"),
    },
    possessive=_set("son sa ses leur leurs"),
    person_wh=_set("qui quelqu personne"),
    determiners=_set(
        "le la les l un une des du au aux ce cet cette ces mon ma mes ton ta tes notre nos votre vos "
        "son sa ses leur leurs quel quelle quels quelles chaque plusieurs deux trois quelques"
    ),
    definite=_set("le la les l du au aux"),
    demonstrative=_set("ce cet cette ces"),
    introducing=_set("un une des quel quelle quels quelles deux trois quelques plusieurs"),
    auxiliaries=_set("est sont a ont était peut doit va"),
    boundaries=_set("et mais ou car parce quand lorsque si puis alors donc pendant après avant"),
    expletive=re.compile(
        r"\bil\s+(?:y\s+a|faut|fait|s'agit|existe|reste|vaut|pleut|neige)\b|"
        r"\b(?:y\s+a|faut|fait|vaut|existe|reste|agit)-(?:t-)?il\b|\bquelle\s+heure\s+est-il\b|"
        r"\b(?:il\s+est|est-il)\s+(?:\w+\s+){0,2}?(?:de|d'|que|qu')",
        re.IGNORECASE,
    ),
    demo_pronoun=re.compile(r"(?!x)x"),
    generic=_set("résultat réponse nombre mot nom titre somme valeur choix suggestion"),
    restrictive=_set("de d du des pour"),
    ellipsis=re.compile(
        r"^\W*(?:et|ou|aussi|qu'en est-il|et pour|même chose|pareil pour|de même)\b", re.IGNORECASE
    ),
    frame_whole=re.compile(
        r"\b(?:classe|classez|ordonne|ordonnez|trie|triez|range|rangez|compare|comparez|évalue|"
        r"évaluez|regroupe|regroupez|hiérarchise)\b|"
        r"\b(?:laquelle|lequel|lesquel(?:le)?s)\s+(?:de|d')\s*(?:ces|celles|ceux|entre)|"
        r"\bchoisi(?:s|ssez)\b[^.?!\n]{0,30}\b(?:une?|l'une?|la meilleure|le meilleur|parmi)\s+"
        r"(?:de|d'|des|parmi|entre|ces|celles|ceux)|"
        r"\bles (?:deux|trois|quatre|cinq|\d+) (?:réponses|mots|résultats|nombres|noms)\b|"
        r"\b(?:le|la|les)\s+même(?:s)?\b[^.?!\n]{0,10}?\b(?:mot|réponse|nombre|lettre|terme)\b|"
        r"\b(?:un seul|une seule)\s+(?:mot|réponse|nombre|terme)\b|"
        r"\ben (?:deux|trois|quatre|cinq|six|\d+) (?:parties|sections|chapitres|actes|strophes|scènes)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:écris|écrivez|rédige|rédigez|compose|composez|raconte|racontez|crée|créez|invente|"
        r"inventez|imagine|imaginez)(?:-moi|-nous)? (?:un|une)\b(?![^.?!\n]{0,20}\bréponse)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:chaque|chacune?|séparément|individuellement|une par une|un par un|respectivement)\b",
        re.IGNORECASE,
    ),
)

ES = Latin(
    code="es",
    function=_set(
        "el la los las lo un una unos unas este esta estos estas ese esa esos esas aquel aquella mi mis "
        "tu tus su sus nuestro nuestra yo tú él ella usted nosotros ellos ellas ustedes me te se le les "
        "nos qué que quién quiénes cuál cuáles cuándo cuando dónde donde cómo como cuánto cuánta cuántos "
        "cuántas por para de del al a en con sin sobre entre hasta desde y e o u pero porque si no sí "
        "más menos muy también es son era eran fue fueron ser está están estaba hay ha han había tiene "
        "tienen puede pueden puedo debe hace"
    ),
    pronouns={
        **dict.fromkeys(["él", "ella", "su", "sus"], "x"),
        **dict.fromkeys(["ellos", "ellas"], "pl"),
        **dict.fromkeys(["esto", "eso", "aquello", "lo", "allí", "allá", "ahí"], "t"),
    },
    possessive=_set("su sus"),
    person_wh=_set("quién quiénes alguien persona"),
    determiners=_set(
        "el la los las un una unos unas este esta estos estas ese esa esos esas aquel aquella mi mis "
        "tu tus su sus nuestro nuestra qué cuál cada dos tres varios algunos algún alguna"
    ),
    definite=_set("el la los las del al"),
    demonstrative=_set(
        "este esta estos estas ese esa esos esas aquel aquella aquellos aquellas dicho dicha dichos dichas"
    ),
    introducing=_set("un una unos unas qué cuál cuáles algún alguna dos tres"),
    auxiliaries=_set("es son fue era está están ha han tiene puede debe"),
    boundaries=_set("y e pero o u porque cuando si mientras aunque después antes pues"),
    expletive=re.compile(r"(?!x)x"),
    demo_pronoun=re.compile(
        r"\b(?:este|esta|ese|esa|estos|estas|esos|esas)\b(?=\s*(?:[?.!,;:]|$|(?:es|fue|son|era|tiene|"
        r"cuesta|significa|funciona)\b))",
        re.IGNORECASE,
    ),
    generic=_set(
        "resultado respuesta número palabra nombre título suma valor opción elección sugerencia"
    ),
    restrictive=_set("de del para"),
    ellipsis=re.compile(
        r"^\W*(?:y|o|también|qué tal|qué hay de|lo mismo|igual para|y qué)\b", re.IGNORECASE
    ),
    frame_whole=re.compile(
        r"\b(?:ordena|ordene|ordenen|clasifica|clasifique|compara|compare|comparen|organiza|agrupa|"
        r"puntúa|califica|jerarquiza)\b|"
        r"\bcuál(?:es)?\s+de\s+(?:estas|estos|ellas|ellos|las siguientes|los siguientes)\b|"
        r"\b(?:elige|escoge|selecciona)\b[^.?!\n]{0,30}\b(?:uno|una|la mejor|el mejor|entre)\s+"
        r"(?:de|entre|estas|estos|ellas|ellos)|"
        r"\b(?:las|los) (?:dos|tres|cuatro|cinco|\d+) (?:respuestas|palabras|resultados|números|nombres)\b|"
        r"\b(?:la|el|las|los)\s+mism[ao]s?\b[^.?!\n]{0,10}?\b(?:palabra|respuesta|número|letra|término)\b|"
        r"\b(?:una sola|un solo|una única|un único)\s+(?:palabra|respuesta|número|término)\b|"
        r"\ben (?:dos|tres|cuatro|cinco|seis|\d+) (?:partes|secciones|capítulos|actos|estrofas|escenas)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:escribe|escriba|escríbeme|redacta|compón|crea|inventa|cuéntame|cuenta|imagina)\b"
        r"(?: me)? (?:un|una)\b(?![^.?!\n]{0,20}\brespuesta)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:cada|por separado|individualmente|una por una|uno por uno|respectivamente)\b",
        re.IGNORECASE,
    ),
)
